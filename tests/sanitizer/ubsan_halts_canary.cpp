// Undefined behaviour on purpose: a signed overflow the compiler cannot see coming (the operand
// is volatile). Under UBSan with -fno-sanitize-recover or halt_on_error this program must die
// at the overflow; tests/meson.build runs it as an expected failure.
#include <climits>
#include <cstdio>

int main() {
    volatile int big = INT_MAX;
    const int wrapped = big + 1;  // undefined: signed overflow
    std::printf("UBSan let a signed overflow through: %d\n", wrapped);
    return 0;
}
