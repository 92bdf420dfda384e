// Package atomicfile writes files so that a reader, a crash or a full disk
// never leaves a mix of old and new bytes: the data goes to a temporary
// file in the same folder, which is synced, closed and renamed over the
// target; then the folder is synced so the rename itself survives a power
// cut.
//
// What each step may do differs by operating system, and the choice is
// made in one table (rulesFor) that tests exercise for every OS on any
// machine:
//
//   - Linux and the BSDs: chmod the temporary file, fsync it, rename,
//     then open the folder and fsync it.
//   - macOS: the same; Go's (*os.File).Sync asks for F_FULLFSYNC there,
//     which reaches the platter rather than the drive's cache.
//   - Windows: a folder cannot be opened for syncing (os.Open on a folder
//     then Sync fails with "Access is denied"), so the folder sync is
//     skipped, as Go's own os package and other atomic writers do;
//     os.Rename replaces an existing target (MoveFileEx with
//     MOVEFILE_REPLACE_EXISTING) once the temporary file is closed, and
//     the permission bits are left to the folder's ACLs instead of chmod.
//
// IsNoSpace tells a full disk (or an exhausted quota) from other write
// errors on every OS, so callers can make room and retry.
package atomicfile
