// Package contentcli is the content flags both tools share (--content,
// --game-version, --mods-config) and the loading of the content they
// name. The loading itself is package gamecontent's, which knows no
// command line.
package contentcli
