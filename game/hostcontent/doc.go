// Package hostcontent turns loaded game content (a gamecontent.Bundle)
// into what only the host side needs: the content a host announces to
// joiners, the metadata of the saves it writes, and the rebuilding of a
// world from a save.
//
// It is kept apart from package gamecontent, which both tools share, so
// that the join tool loads content without linking the host, the save
// format or anything else host-side.
package hostcontent
