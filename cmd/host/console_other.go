//go:build !unix

package main

// quietBackgroundRead has nothing to do where a background read from the
// terminal does not stop the process.
func quietBackgroundRead() {}
