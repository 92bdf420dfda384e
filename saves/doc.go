// Package saves persists a session to disk so that no crash loses a
// colony: every file is written to a temporary file in the same folder,
// synced, renamed over the old one and the folder synced, so a reader
// sees either the old file or the new one, never a mix.
//
// Today it holds the atomic write that every save goes through; the save
// format (header, blobs, checksum) and autosave rotation build on it.
package saves
