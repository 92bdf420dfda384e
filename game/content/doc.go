// Package gamecontent loads the game content both tools run on: the
// embedded default content of the reference simulation, or mod folders
// given with --content, scanned into def databases and turned into the
// simulation's content. It knows no command line: the tools' content
// flags are package contentcli's.
//
// It is linked by the join tool as well as the host, so it imports no
// host-side package; what only a host derives from loaded content (what
// it announces, save metadata, loading a save) is in package
// hostcontent (game/hostcontent).
package gamecontent
