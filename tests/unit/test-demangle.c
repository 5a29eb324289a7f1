/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The C++ demangler (include/flagprism/demangle.h): real kernel names of PyTorch, CUTLASS and
 * Triton launchers and the constructs they use, in both forms, checked against c++filt's text
 * (GNU binutils 2.42) for the full form; malformed and unsupported names; caps on output, depth
 * and substitutions; out-of-memory at every allocation.
 */
#include <stdlib.h>
#include <string.h>

#include <flagprism/demangle.h>
#include <flagprism/status.h>

#include "test.h"

struct dm_case {
	const char *mangled, *full, *brief;
};

static const struct dm_case cases[] = {
	{"_Z10add_kernelPfS_S_i", "add_kernel(float*, float*, float*, int)", "add_kernel"},
	{"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEEv"
	 "iT0_T1_",
	 "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
	 "std::array<char*, 2ul> >(int, at::native::AbsFunctor<float>, std::array<char*, 2ul>)",
	 "at::native::vectorized_elementwise_kernel<...>"},
	{"_ZN7cutlass7Kernel2I52cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4EEvNT_6ParamsE",
	 "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4>"
	 "(cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4::Params)",
	 "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4>"},
	/* lambdas local to const call operators of lambdas, inside template arguments */
	{"_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct"
	 "_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE8_clEvEUlN3c104HalfEE_EEvS4"
	 "_RKT_EUliE_EEviT1_",
	 "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
	 "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda"
	 "()#10}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::dir"
	 "ect_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#"
	 "10}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1}>(int, at::native::g"
	 "pu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda"
	 "()#3}::operator()() const::{lambda()#10}::operator()() const::{lambda(c10::Half)#1}>(at::Te"
	 "nsorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()"
	 "#3}::operator()() const::{lambda()#10}::operator()() const::{lambda(c10::Half)#1} const&)::"
	 "{lambda(int)#1})",
	 "at::native::elementwise_kernel<...>"},
	{"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT"
	 "1_",
	 "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<flo"
	 "at, float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::nati"
	 "ve::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>)",
	 "at::native::reduce_kernel<...>"},
	/* a template parameter reached through a substitution taken in a nested encoding means
	 * the outer template's parameter (c++filt's reading) */
	{"_ZN2at6nativeL27unrolled_elementwise_kernelINS0_13AUnaryFunctorIfff18__nv_hdl_wrapper_tIL"
	 "b0ELb0ELb0E11__nv_dl_tagIPFvRNS_18TensorIteratorBaseEffEXadL_ZNS0_67_GLOBAL__N__06c19b41_2"
	 "8_ActivationThresholdKernel_cu_ef1a7132_1580621threshold_kernel_implIfEEvS6_T_SB_EELj1EEFf"
	 "ffEJffEEEESt5arrayIPcLm2EELi4E23TrivialOffsetCalculatorILi1EjESK_NS0_6memory15LoadWithoutC"
	 "astENSL_16StoreWithoutCastEEEviSB_T0_T2_T3_T4_T5_",
	 "void at::native::unrolled_elementwise_kernel<at::native::AUnaryFunctor<float, float, float,"
	 " __nv_hdl_wrapper_t<false, false, false, __nv_dl_tag<void (*)(at::TensorIteratorBase&, flo"
	 "at, float), &(void at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::Tens"
	 "orIteratorBase&, float, float)), 1u>, float (float, float), float, float> >, std::array<cha"
	 "r*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned "
	 "int>, at::native::memory::LoadWithoutCast, at::native::memory::StoreWithoutCast>(int, at::n"
	 "ative::AUnaryFunctor<float, float, float, __nv_hdl_wrapper_t<false, false, false, __nv_dl_t"
	 "ag<void (*)(at::TensorIteratorBase&, float, float), &(void at::native::(anonymous namespace"
	 ")::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)), 1u>, float (float,"
	 " float), float, float> >, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>,"
	 " TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast, at::native:"
	 ":memory::StoreWithoutCast)",
	 "at::native::unrolled_elementwise_kernel<...>"},
	{"_ZZN1n1fIiEEvT_E1x", "n::f<int>(int)::x", "n::f<int>::x"},
	{"_ZN1A1BC2Ev", "A::B::B()", "A::B::B"},
	{"_ZN1A1BD1Ev", "A::B::~B()", "A::B::~B"},
	{"_ZNK3foo3barEv", "foo::bar() const", "foo::bar"},
	{"_ZN3fooplERKS_S1_", "foo::operator+(foo const&, foo const&)", "foo::operator+"},
	{"_Z1fIJifEEvDpT_", "void f<int, float>(int, float)", "f<...>"},
	{"_Z1fIJEEvDpT_", "void f<>()", "f<>"},
	{"_Z1fIiEvPFvT_E", "void f<int>(void (*)(int))", "f<int>"},
	{"_Z1fPA4_i", "f(int (*) [4])", "f"},
	{"_Z1fM1AFviE", "f(void (A::*)(int))", "f"},
	{"_Z1fM1Ai", "f(int A::*)", "f"},
	{"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()", "(anonymous namespace)::foo"},
	{"_Z1fIXadL_Z1gvEEEvv", "void f<&(g())>()", "f<...>"},
	{"_Z1fILb1ELj7ELl3EEvv", "void f<true, 7u, 3l>()", "f<...>"},
	{"_Z1fIDF16_EvT_", "void f<_Float16>(_Float16)", "f<_Float16>"},
	{"_ZTV3Foo", "vtable for Foo", "vtable for Foo"},
	{"_ZGVZ1fvE1x", "guard variable for f()::x", "guard variable for f::x"},
	{"_Z3foov.constprop.0", "foo() [clone .constprop.0]", "foo [clone .constprop.0]"},
	{"_ZN5Outer5InnerB5cxx11Ev", "Outer::Inner[abi:cxx11]()", "Outer::Inner[abi:cxx11]"},
	{"_Z1fPKcRKiOd", "f(char const*, int const&, double&&)", "f"},
	{"_ZN1N1fIiEEvT_PKS1_", "void N::f<int>(int, int const*)", "N::f<int>"},
	{"_Z1fDv4_f", "f(float __vector(4))", "f"},
	{"_Z1fIiEvRKT_", "void f<int>(int const&)", "f<int>"},
	{"_ZZ1fvENKUlvE_clEv", "f()::{lambda()#1}::operator()() const",
	 "f::{lambda#1}::operator()"},
	{"__Z3barv", "bar()", "bar"},
};

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

static char buf[FP_DEMANGLE_MAX + 1];

TEST(demangle_cases)
{
	size_t i, len;

	for (i = 0; i < NCASES(cases); i++) {
		const struct dm_case *c = &cases[i];

		ASSERT_OK(fp_demangle(c->mangled, strlen(c->mangled), FP_DEMANGLE_FULL, buf,
				      sizeof(buf), &len));
		ASSERT_STREQ(buf, c->full);
		ASSERT_EQ(len, strlen(c->full));
		ASSERT_OK(fp_demangle(c->mangled, strlen(c->mangled), FP_DEMANGLE_SHORT, buf,
				      sizeof(buf), NULL));
		ASSERT_STREQ(buf, c->brief);
	}
}

TEST(demangle_refuses)
{
	static const char *const bad[] = {
		"add_kernel",    /* not mangled */
		"_Z",            /* nothing after the prefix */
		"_ZN2at6native", /* cut short */
		"_Z1fS5_",       /* a substitution that does not exist */
		"_Z1fT_",        /* a template parameter outside any template */
		"_Z3fooi\x01",   /* a byte no name has */
		"_Z99x",         /* a length past the end */
		"_ZN1aE.",       /* fine, with an empty clone suffix */
	};
	size_t i, len = 77;
	int rc;

	ASSERT_EQ(fp_demangle("add_kernel", 10, FP_DEMANGLE_FULL, buf, sizeof(buf), &len),
		  FP_EFORMAT);
	ASSERT_EQ(len, 77); /* untouched on failure */
	for (i = 0; i + 1 < NCASES(bad); i++) {
		rc = fp_demangle(bad[i], strlen(bad[i]), FP_DEMANGLE_FULL, buf, sizeof(buf), NULL);
		ASSERT(rc == FP_EFORMAT || rc == FP_ENOTSUP);
	}
	ASSERT_OK(fp_demangle(bad[i], strlen(bad[i]), FP_DEMANGLE_FULL, buf, sizeof(buf), NULL));
	ASSERT_STREQ(buf, "a [clone .]");
	/* decltype: outside the subset, said so */
	ASSERT_EQ(fp_demangle("_Z1fIiEDTcl1gfp_EET_", 20, FP_DEMANGLE_FULL, buf, sizeof(buf), NULL),
		  FP_ENOTSUP);
	ASSERT_EQ(fp_demangle(NULL, 3, FP_DEMANGLE_FULL, buf, sizeof(buf), NULL), FP_EINVAL);
	ASSERT_EQ(fp_demangle("_Z1fv", 5, FP_DEMANGLE_FULL, buf, 0, NULL), FP_EINVAL);
	ASSERT_EQ(fp_demangle("_Z1fv", 5, (enum fp_demangle_form)7, buf, 9, NULL), FP_EINVAL);
	ASSERT(fp_demangle_is_mangled("_Z1fv", 5));
	ASSERT(!fp_demangle_is_mangled("triton_poi_fused_0", 18));
	ASSERT(!fp_demangle_is_mangled("_Z", 2));
	/* len is the bound, not the NUL: the name is read no further */
	ASSERT_OK(fp_demangle("_Z1fvGARBAGE", 5, FP_DEMANGLE_FULL, buf, sizeof(buf), NULL));
	ASSERT_STREQ(buf, "f()");
}

TEST(demangle_bounds)
{
	static char name[1 << 17];
	char small[8];
	size_t n, i;
	int rc;

	/* the caller's buffer */
	ASSERT_EQ(fp_demangle("_Z10add_kernelPfS_S_i", 21, FP_DEMANGLE_FULL, small, sizeof(small),
			      NULL),
		  FP_ELIMIT);
	ASSERT_OK(fp_demangle("_Z1fv", 5, FP_DEMANGLE_FULL, small, 4, NULL));
	ASSERT_STREQ(small, "f()");
	ASSERT_EQ(fp_demangle("_Z1fv", 5, FP_DEMANGLE_FULL, small, 3, NULL), FP_ELIMIT);
	/* nesting: 100,000 pointers */
	memcpy(name, "_Z1f", 4);
	for (n = 4; n < 100004; n++)
		name[n] = 'P';
	name[n++] = 'i';
	ASSERT_EQ(fp_demangle(name, n, FP_DEMANGLE_FULL, buf, sizeof(buf), NULL), FP_ELIMIT);
	/* substitutions that double the text at every step: capped, not exponential */
	n = (size_t)snprintf(name, sizeof(name), "_Z1fI1AIS_S_EE");
	for (i = 0; i < 40; i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "S%zu_", i % 3);
	rc = fp_demangle(name, n, FP_DEMANGLE_FULL, buf, sizeof(buf), NULL);
	ASSERT(rc == FP_ELIMIT || rc == FP_EFORMAT);
	n = (size_t)snprintf(name, sizeof(name), "_Z1fv");
	while (n + 8 < 40000)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "S_");
	rc = fp_demangle(name, n, FP_DEMANGLE_FULL, buf, sizeof(buf), NULL);
	ASSERT(rc == FP_EFORMAT || rc == FP_ELIMIT);
}

static int demangle_run(void *arg)
{
	const struct dm_case *c = arg;

	return fp_demangle(c->mangled, strlen(c->mangled), FP_DEMANGLE_SHORT, buf, sizeof(buf),
			   NULL);
}

TEST(demangle_oom)
{
	/* every allocation fails in turn: FP_ENOMEM and nothing left allocated */
	ASSERT_GT(fpt_oom_sweep(demangle_run, (void *)&cases[5], 0, 5, NULL), 5);
	ASSERT_GT(fpt_oom_sweep(demangle_run, (void *)&cases[3], 0, 5, NULL), 5);
}
