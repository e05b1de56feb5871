// The reductions beyond common.cuh's operators, and how a reduction sees its elements and writes
// its results.  A reduction is an operator (identity and combination, as SumOp ...) plus:
//   lift<Acc>(op, x, index)  element x at `index` along n as the accumulator (default: operand,
//                            so a scan's IgnoreNan operator, whose chunk totals the column kernel
//                            sums, reads a NaN as its identity);
//   accumulate(op, acc, x, index)  acc with the element folded in (default: op(acc, lift));
//   result<Out>(op, acc)     the accumulator as the result (default: converted);
//   partials_of<Op>          the operator that combines Op's accumulators (a second launch, a
//                            streamed call's running results): Op itself unless lifting does more
//                            than convert; partials_op_of(op) makes it from the call's operator.
// Operators are values: most are empty, var/std's carries ddof (make_op builds one from the call).
//
// The nan-functions (skip_nan, float inputs) are IgnoreNan<Op> (common.cuh): sum and prod read a NaN
// as their identity and combine partials as Op (a NaN the data's own arithmetic made stays);
// nanmin/nanmax and nanargmin/nanargmax have their own IgnoreNan below, whose identity and
// partials mark a slice of NaNs; var, std and mean skip NaN samples (MomentsOp's SkipNan).
#pragma once

#include "common.cuh"

namespace gp {

// argmin/argmax's accumulator: a value (min/max's accumulator type) and its index along n.
template <class T> struct Arg {
    T value;
    int64_t index;
};

template <class T> inline constexpr bool is_arg = false;
template <class T> inline constexpr bool is_arg<Arg<T>> = true;

// argmin (Best = MinOp) and argmax (MaxOp): a NaN beats any number and the lower index breaks ties,
// among NaNs too, so that the first minimum (maximum), or the first NaN, wins whatever the order
// of combination.  Elements lifts elements to (value, index); its partials_of combines pairs.
template <class Best, bool Elements = true> struct ArgOp {
    static constexpr bool max = cuda::std::is_same_v<Best, MaxOp>;

    template <class A> static __device__ __forceinline__ A identity()
    {
        return A{Best::template identity<decltype(A::value)>(), cuda::std::numeric_limits<int64_t>::max()};
    }
    template <class A> __device__ __forceinline__ A operator()(A a, A b) const
    {
        const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value), a_first = a.index < b.index;
        bool a_wins;
        if (a_nan || b_nan) a_wins = a_nan && (!b_nan || a_first);
        else if (max) a_wins = a.value > b.value || (!(b.value > a.value) && a_first);
        else a_wins = a.value < b.value || (!(b.value < a.value) && a_first);
        return a_wins ? a : b;
    }
};

// nanargmin (Best = MinOp) and nanargmax (MaxOp), as NumPy's: a NaN compares as +inf (-inf), so it
// never wins over a number but ties with +inf (-inf), the lower index winning.  A value stays NaN
// only while every element combined was one (the identity is such a NaN, with no index), which
// result() turns into the index -1.
template <class Best, bool Elements> struct IgnoreNan<ArgOp<Best, Elements>> {
    static constexpr bool max = ArgOp<Best, Elements>::max;

    template <class A> static __device__ __forceinline__ A identity()
    {
        return A{cuda::std::numeric_limits<decltype(A::value)>::quiet_NaN(), cuda::std::numeric_limits<int64_t>::max()};
    }
    template <class A> __device__ __forceinline__ A operator()(A a, A b) const
    {
        using V = decltype(A::value);
        const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value), a_first = a.index < b.index;
        const V key_a = a_nan ? Best::template identity<V>() : a.value;
        const V key_b = b_nan ? Best::template identity<V>() : b.value;
        const bool a_wins = max ? key_a > key_b || (!(key_b > key_a) && a_first)
                                : key_a < key_b || (!(key_b < key_a) && a_first);
        A winner = a_wins ? a : b;
        if (!(a_nan && b_nan)) winner.value = a_wins ? key_a : key_b;
        return winner;
    }
};

// nanmin (Max = false) and nanmax: a NaN loses to any number; the identity is a NaN, so that a
// slice of NaNs gives NaN (floats only: integers have no NaN-skipping form).
template <bool Max> struct SkipNanMinMax {
    template <class T> static __device__ __forceinline__ T identity() { return cuda::std::numeric_limits<T>::quiet_NaN(); }
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        if constexpr (Max) return (is_nan(b) || a > b) ? a : b;
        else return (is_nan(b) || a < b) ? a : b;
    }
};
template <> struct IgnoreNan<MinOp> : SkipNanMinMax<false> {};
template <> struct IgnoreNan<MaxOp> : SkipNanMinMax<true> {};

// any (Combine = MaxOp), all (MinOp) and count_nonzero (SumOp) combine x != 0 (a NaN is nonzero,
// -0.0 is not): as uint32_t 0/1 words or uint64_t counts.
template <class Combine> struct NonzeroOp : Combine {};

// var, std and mean (the nan-functions': with SkipNan, NaN samples left out): Moments of the
// elements, Chan, Golub and LeVeque's pairwise combination of (count, mean, M2) above the
// elements.  An element goes in as a Sample, by shifted sums (no division per element); the shift
// is the first element, so that the sums do not cancel when the mean is far from 0.  Combined
// partials are centred: re-based at their mean (s1 = 0), so that combining two of them takes one
// division (a double division is ~40 instructions: with three, the 1,056 partials of a 2^28 var
// took 32 us on one warp of the H200).
struct Moments {
    double count, shift, s1, s2;  // s1, s2: sums of (x - shift) and (x - shift)^2
};
struct Sample {
    double x;
};

enum class Moment { var, std, mean };

template <Moment Result, bool SkipNan = false> struct MomentsOp {
    static constexpr Moment result = Result;
    double ddof;

    template <class A> static __device__ __forceinline__ A identity() { return A{0.0, 0.0, 0.0, 0.0}; }
    __device__ __forceinline__ Moments operator()(Moments a, Sample b) const
    {
        if constexpr (SkipNan)
            if (is_nan(b.x)) return a;
        const double shift = a.count == 0.0 ? b.x : a.shift;
        const double d = b.x - shift;
        return Moments{a.count + 1.0, shift, a.s1 + d, a.s2 + d * d};
    }
    __device__ __forceinline__ Moments operator()(Moments a, Moments b) const
    {
        if (a.count == 0.0) return b;
        if (b.count == 0.0) return a;
        a = centred(a);
        b = centred(b);
        const double count = a.count + b.count, b_share = b.count / count;
        const double delta = b.shift - a.shift;
        return Moments{count, a.shift + delta * b_share, 0.0, a.s2 + b.s2 + delta * delta * (a.count * b_share)};
    }
    // The same moments re-based at their mean: shift the mean, s1 = 0 and s2 the sum of squared
    // deviations from it (never below 0 by rounding; a NaN stays).  Already centred: no division,
    // and the mean is shift + s1 all the same (a -0.0 mean then comes out +0.0, as NumPy's).
    static __device__ __forceinline__ Moments centred(Moments a)
    {
        if (a.s1 == 0.0 || a.count == 0.0) return Moments{a.count, a.shift + a.s1, 0.0, a.s2};
        const double mean_offset = a.s1 / a.count, m2 = a.s2 - a.s1 * mean_offset;
        return Moments{a.count, a.shift + mean_offset, 0.0, m2 < 0.0 ? 0.0 : m2};
    }
};

template <bool SkipNan = false> using VarOp = MomentsOp<Moment::var, SkipNan>;
template <bool SkipNan = false> using StdOp = MomentsOp<Moment::std, SkipNan>;
template <bool SkipNan = false> using MeanOp = MomentsOp<Moment::mean, SkipNan>;

template <class T> inline constexpr bool is_moments = false;
template <Moment Result, bool SkipNan> inline constexpr bool is_moments<MomentsOp<Result, SkipNan>> = true;

template <class Op> struct partials_op { using type = Op; };
template <class Best> struct partials_op<ArgOp<Best, true>> { using type = ArgOp<Best, false>; };
template <class Op> struct partials_op<IgnoreNan<Op>> { using type = Op; };
template <> struct partials_op<IgnoreNan<MinOp>> { using type = IgnoreNan<MinOp>; };
template <> struct partials_op<IgnoreNan<MaxOp>> { using type = IgnoreNan<MaxOp>; };
template <class Best, bool Elements> struct partials_op<IgnoreNan<ArgOp<Best, Elements>>> {
    using type = IgnoreNan<ArgOp<Best, false>>;
};
template <class Combine> struct partials_op<NonzeroOp<Combine>> { using type = Combine; };
template <class Op> using partials_of = typename partials_op<Op>::type;

// The call's operator (var/std: with its ddof), and the operator of its partial results: operators
// with state (var/std) are their own partials' operator.
template <class Op> __host__ __device__ Op make_op(const gp_reduce_args &args)
{
    if constexpr (is_moments<Op>) return Op{args.ddof};
    else return (void)args, Op{};
}
template <class Op> __host__ __device__ partials_of<Op> partials_op_of(const Op &op)
{
    if constexpr (cuda::std::is_same_v<partials_of<Op>, Op>) return op;
    else return (void)op, partials_of<Op>{};
}

template <class Acc, class Op, class In> __device__ __forceinline__ Acc lift(const Op &, In x, int64_t)
{
    return operand<Acc, Op>(x);
}

template <class Acc, class Best, class In>
__device__ __forceinline__ Acc lift(const ArgOp<Best, true> &, In x, int64_t index)
{
    return Acc{convert<decltype(Acc::value)>(x), index};
}

template <class Acc, class Best, class In>
__device__ __forceinline__ Acc lift(const IgnoreNan<ArgOp<Best, true>> &, In x, int64_t index)
{
    return Acc{convert<decltype(Acc::value)>(x), index};  // a NaN stays: it marks a slice of NaNs so far
}

template <class Acc, class Combine, class In>
__device__ __forceinline__ Acc lift(const NonzeroOp<Combine> &, In x, int64_t)
{
    if constexpr (cuda::std::is_same_v<In, __half>) return __half2float(x) != 0.0f;
    else return x != In(0);
}

template <class Acc, Moment Result, bool SkipNan, class In>
__device__ __forceinline__ Sample lift(const MomentsOp<Result, SkipNan> &, In x, int64_t)
{
    return Sample{convert<double>(x)};
}

template <class Acc, Moment Result, bool SkipNan>
__device__ __forceinline__ Moments lift(const MomentsOp<Result, SkipNan> &, Moments partial, int64_t)
{
    return partial;
}

// accumulate(op, acc, x, index): acc with element x at `index` along n folded in.  Every kernel
// hands an accumulator its elements in increasing index order, which argmin/argmax's own form uses.
template <class Acc, class Op, class In>
__device__ __forceinline__ Acc accumulate(const Op &op, Acc acc, In x, int64_t index)
{
    return op(acc, lift<Acc>(op, x, index));
}

// argmin/argmax: x comes after every index acc holds, so it wins only over an empty accumulator
// (the identity's index) or by being strictly better, a NaN over a number; ties keep the earlier
// index without comparing indices (argmax of 16384^2 float32 along axis 0: 0.74x to 0.86x memcpy
// on the H200).
template <class Acc, class Best, class In>
__device__ __forceinline__ Acc accumulate(const ArgOp<Best, true> &, Acc acc, In x, int64_t index)
{
    using V = decltype(Acc::value);
    const V value = convert<V>(x);
    const bool better = ArgOp<Best, true>::max ? !(value <= acc.value) : !(value >= acc.value);
    const bool empty = acc.index == cuda::std::numeric_limits<int64_t>::max();
    return empty || (!is_nan(acc.value) && better) ? Acc{value, index} : acc;
}

// The accumulator as the result: argmin/argmax's index (nanargmin/nanargmax: -1 for a slice of
// NaNs), var's M2 / (count - ddof) (NaN where that is not positive), std's square root of it and
// mean's mean (NaN for a count of 0), or the accumulator itself, as a partial result.
template <class Out, class Op, class Acc> __device__ __forceinline__ Out result(const Op &op, Acc acc)
{
    constexpr double nan = cuda::std::numeric_limits<double>::quiet_NaN();
    if constexpr (cuda::std::is_same_v<Out, Acc>) {
        return acc;
    } else if constexpr (is_arg<Acc>) {
        if constexpr (ignores_nan<Op>)
            if (is_nan(acc.value)) return Out(-1);
        return acc.index;
    } else if constexpr (is_moments<Op>) {
        acc = Op::centred(acc);
        if constexpr (Op::result == Moment::mean) return convert<Out>(acc.count > 0.0 ? acc.shift : nan);
        const double dof = acc.count - op.ddof;
        const double var = dof > 0.0 ? acc.s2 / dof : nan;
        // std: the square root of the variance rounded to Out, as NumPy's (a float16 variance may be inf)
        if constexpr (Op::result == Moment::std) return convert<Out>(sqrt(convert<double>(convert<Out>(var))));
        else return convert<Out>(var);
    } else {
        return convert<Out>(acc);
    }
}

// The accumulator and result types of the reductions whose accumulator does not follow the
// accumulator rule (sum and prod: dispatch_accumulator): min/max keep the input's type (compared
// in minmax_accumulator's); argmin/argmax pair it with an index and give the int64 index; any and
// all give bool, count_nonzero int64.
template <class Op, class In> struct reduce_types {
    using acc = typename minmax_accumulator<In>::type;
    using out = In;
};
template <class Best, class In> struct reduce_types<ArgOp<Best, true>, In> {
    using acc = Arg<typename minmax_accumulator<In>::type>;
    using out = int64_t;
};
template <class Best, class In> struct reduce_types<IgnoreNan<ArgOp<Best, true>>, In> : reduce_types<ArgOp<Best, true>, In> {};
template <class Combine, class In> struct reduce_types<NonzeroOp<Combine>, In> {
    using acc = uint32_t;
    using out = bool;
};
template <class In> struct reduce_types<NonzeroOp<SumOp>, In> {
    using acc = uint64_t;
    using out = int64_t;
};

using ArgMinOp = ArgOp<MinOp>;
using ArgMaxOp = ArgOp<MaxOp>;
using AnyOp = NonzeroOp<MaxOp>;
using AllOp = NonzeroOp<MinOp>;
using CountNonzeroOp = NonzeroOp<SumOp>;

}  // namespace gp
