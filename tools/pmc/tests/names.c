// SPDX-License-Identifier: GPL-2.0
/*
 * names: functions named as the C++ and Rust compilers name them, for
 * pmc-report's demangling check in report-test.sh, which reads only
 * their symbols and addresses: main -> burn -> each of them.
 */
void cxx_method(void) __asm__("_ZNK3app6Matrix3dotERKS0_");
void rust_fn(void) __asm__("_RNvCsgStHSCytQ6I_7mycrate4main");

__attribute__((noinline)) void cxx_method(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void rust_fn(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void burn(void)
{
	cxx_method();
	rust_fn();
}

int main(void)
{
	burn();
	return 0;
}
