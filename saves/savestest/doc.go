// Package savestest makes hostile save files for tests and scripts: a
// sparse file whose every declared length agrees with its size, so only a
// reader that streams stays small.
package savestest
