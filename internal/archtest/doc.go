// Package archtest holds tests of the repository's shape rather than its
// behaviour: rules a reviewer would otherwise have to check by eye, such
// as how long a function in the core packages may grow. It has no code of
// its own.
package archtest
