// The reductions beyond common.cuh's operators, and how a reduction sees its elements and writes
// its results.  A reduction is an operator (identity and combination, as SumOp ...) plus:
//   lift<Acc>(op, x, index)  element x at `index` along n as the accumulator (default: operand,
//                            so a scan's IgnoreNan operator, whose chunk totals the column kernel
//                            sums, reads a NaN as its identity);
//   result<Out>(op, acc)     the accumulator as the result (default: converted);
//   partials_of<Op>          the operator that combines Op's accumulators (a second launch, a
//                            streamed call's running results): Op itself unless lifting does more
//                            than convert; partials_op_of(op) makes it from the call's operator.
// Operators are values: most are empty, var/std's carries ddof (make_op builds one from the call).
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

// any (Combine = MaxOp), all (MinOp) and count_nonzero (SumOp) combine x != 0 (a NaN is nonzero,
// -0.0 is not): as uint32_t 0/1 words or uint64_t counts.
template <class Combine> struct NonzeroOp : Combine {};

// var (Root = false) and std (true): Moments of the elements, Chan, Golub and LeVeque's pairwise
// combination of (count, mean, M2) above the elements.  An element goes in as a Sample, by shifted
// sums (no division per element); the shift is the first element, so that the sums do not cancel
// when the mean is far from 0.  Combined partials are re-based at their mean (s1 = 0).
struct Moments {
    double count, shift, s1, s2;  // s1, s2: sums of (x - shift) and (x - shift)^2
};
struct Sample {
    double x;
};

template <bool Root> struct MomentsOp {
    double ddof;

    template <class A> static __device__ __forceinline__ A identity() { return A{0.0, 0.0, 0.0, 0.0}; }
    __device__ __forceinline__ Moments operator()(Moments a, Sample b) const
    {
        const double shift = a.count == 0.0 ? b.x : a.shift;
        const double d = b.x - shift;
        return Moments{a.count + 1.0, shift, a.s1 + d, a.s2 + d * d};
    }
    __device__ __forceinline__ Moments operator()(Moments a, Moments b) const
    {
        if (a.count == 0.0) return b;
        if (b.count == 0.0) return a;
        const double count = a.count + b.count, b_share = b.count / count;
        const double mean_a = a.shift + a.s1 / a.count, mean_b = b.shift + b.s1 / b.count;
        const double delta = mean_b - mean_a;
        return Moments{count, mean_a + delta * b_share, 0.0,
                       m2(a) + m2(b) + delta * delta * (a.count * b_share)};
    }
    // The sum of squared deviations from the mean (never below 0 by rounding; a NaN stays).
    static __device__ __forceinline__ double m2(Moments a)
    {
        const double m2 = a.count == 0.0 ? 0.0 : a.s2 - a.s1 * (a.s1 / a.count);
        return m2 < 0.0 ? 0.0 : m2;
    }
};

using VarOp = MomentsOp<false>;
using StdOp = MomentsOp<true>;

template <class T> inline constexpr bool is_moments = false;
template <bool Root> inline constexpr bool is_moments<MomentsOp<Root>> = true;

template <class Op> struct partials_op { using type = Op; };
template <class Best> struct partials_op<ArgOp<Best, true>> { using type = ArgOp<Best, false>; };
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

template <class Acc, class Combine, class In>
__device__ __forceinline__ Acc lift(const NonzeroOp<Combine> &, In x, int64_t)
{
    if constexpr (cuda::std::is_same_v<In, __half>) return __half2float(x) != 0.0f;
    else return x != In(0);
}

template <class Acc, bool Root, class In>
__device__ __forceinline__ Sample lift(const MomentsOp<Root> &, In x, int64_t)
{
    return Sample{convert<double>(x)};
}

template <class Acc, bool Root>
__device__ __forceinline__ Moments lift(const MomentsOp<Root> &, Moments partial, int64_t)
{
    return partial;
}

// The accumulator as the result: argmin/argmax's index, var's M2 / (count - ddof) (NaN where that
// is not positive) and std's square root of it (or the accumulator itself, as a partial result).
template <class Out, class Op, class Acc> __device__ __forceinline__ Out result(const Op &op, Acc acc)
{
    if constexpr (cuda::std::is_same_v<Out, Acc>) {
        return acc;
    } else if constexpr (is_arg<Acc>) {
        return acc.index;
    } else if constexpr (is_moments<Op>) {
        const double dof = acc.count - op.ddof;
        const double var = dof > 0.0 ? Op::m2(acc) / dof : cuda::std::numeric_limits<double>::quiet_NaN();
        // std: the square root of the variance rounded to Out, as NumPy's (a float16 variance may be inf)
        if constexpr (cuda::std::is_same_v<Op, StdOp>) return convert<Out>(sqrt(convert<double>(convert<Out>(var))));
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
