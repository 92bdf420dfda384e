// Package savelock keeps one host per save: an operating-system lock on a
// file beside the save (NAME.lhsave.lock), taken when a host starts on the
// save and held until it exits. The lock is github.com/gofrs/flock's:
// flock(2) on Unix and LockFileEx on Windows, both released by the
// operating system when the process ends however it ends, so a host killed
// with kill -9 or a power cut never leaves a stale lock behind. The lock
// file also says who holds it (process ID, listen address, since when),
// for the sentence a second host is refused with; it is left on disk when
// the host exits, as deleting it could race with a host taking it.
package savelock
