// Package termsafe makes text from files and the network safe to print on
// a terminal: control characters (C0 other than newline and tab, DEL and
// C1, which terminals read as escape sequences) and invalid UTF-8 are
// written as visible escapes such as \x1b, so a report or a host's
// message cannot move the cursor, retitle the window or hide lines.
package termsafe
