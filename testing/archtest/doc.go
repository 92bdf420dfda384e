// Package archtest holds tests of the repository's shape rather than its
// behaviour: rules a reviewer would otherwise have to check by eye, such
// as which package may import which (the floors, in floors_test.go) and
// how long a function may grow (in every package, in funclen_test.go). It
// has no code of its own.
package archtest
