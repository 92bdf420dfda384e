// Package hugeheap lets a program that is about to fill a large part of
// its heap ask Linux to back that memory with transparent huge pages.
//
// Where the kernel leaves huge pages to programs that ask for them (THP
// "madvise" mode, a common default), a Go program gets none: the runtime
// does not ask. Each 4 KiB page it touches for the first time then costs
// a page fault, and in a virtual machine a fault costs much more than on
// bare metal. Loading a 204 MiB world took 72,000 faults, and on a test
// machine's virtual machine a third of the join's CPU time; with huge
// pages it took 2,000, and the join was a fifth faster.
//
// Prepare grows the heap by the bytes about to be needed, advises the
// kernel to use huge pages for that range, and frees it again: the
// allocations that follow reuse it. Elsewhere (other systems, THP off or
// always on, strict overcommit) it does nothing.
package hugeheap
