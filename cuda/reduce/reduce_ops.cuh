// The reductions beyond common.cuh's operators, and how a reduction sees its elements and writes
// its results.  A reduction is an operator (identity and combination, as SumOp ...) plus:
//   lift<Acc>(op, x, index)  element x at `index` along n as the accumulator (default: converted);
//   result<Out>(op, acc)     the accumulator as the result (default: converted);
//   partials_of<Op>          the operator that combines Op's accumulators (a second launch, a
//                            streamed call's running results): Op itself unless lifting does more
//                            than convert.
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

template <class Op> struct partials_op { using type = Op; };
template <class Best> struct partials_op<ArgOp<Best, true>> { using type = ArgOp<Best, false>; };
template <class Combine> struct partials_op<NonzeroOp<Combine>> { using type = Combine; };
template <class Op> using partials_of = typename partials_op<Op>::type;

template <class Acc, class Op, class In> __device__ __forceinline__ Acc lift(const Op &, In x, int64_t)
{
    return convert<Acc>(x);
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

// The accumulator as the result: argmin/argmax's index (or the pair itself, as a partial result).
template <class Out, class Op, class Acc> __device__ __forceinline__ Out result(const Op &, Acc acc)
{
    if constexpr (is_arg<Acc> && !cuda::std::is_same_v<Out, Acc>) return acc.index;
    else return convert<Out>(acc);
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
