// Package modsync is content sync: a host publishes a manifest of the
// mods it runs, and a joiner that lacks some of them fetches exactly the
// files it lacks, by hash, into a cache shared by every host, and loads
// them from there. Only data travels: code is listed as not shared and
// left to the player. The host, the joiner and the browser player share
// this one implementation; they only wire it in.
//
// # The manifest
//
// [Build] makes a [Manifest] from a scanned content set (defs.ScanDirs):
// per mod, in load order, its package ID, name, version and load
// folders, and the files the game reads for the set's game version:
// About/**, the root's LoadFolders.xml, and under each load folder F the
// files of F/Defs, F/Patches, F/Languages, F/Textures, F/Sounds and
// F/AssetBundles. Each file has its '/'-separated path in the mod, size,
// SHA-256, [Kind] and, for def files, the def databases its loaded defs
// belong to. Listed as not shared, with a reason: F/Assemblies/**, files
// whose extension is code's (.dll, .exe, .so, .dylib, .cs, .py, .lua,
// .js, .sh, .bat, .ps1 and the like), files whose first bytes are an
// executable's or a script's (MZ, ELF, Mach-O, WebAssembly, "#!"),
// links and other non-regular files (never followed), names that fail
// [CheckPath] or clash with another file's where letter case does not
// count, and files over the size limit. A mod in BuildOptions.Except is
// listed as held back, without files.
//
// The encoding ([Manifest.Encode]) is msgpack through internal/codec:
// maps keyed by short field names, written in sorted key order, files
// sorted by path, so one manifest always has the same bytes; its hash is
// the SHA-256 of those bytes. [Decode] takes no length on trust: a
// structural pass checks every string, byte string, array and map length
// and the nesting depth against [Limits] (and against the bytes left)
// before the decoder allocates anything, then every field is checked
// (paths with [CheckModPaths], kinds, sizes, order, totals).
//
// # The cache
//
// A [Cache] is a content-addressed folder (by default
// os.UserCacheDir()/lockhost/content): a file enters it only after its
// size and SHA-256 were checked, by a synced rename, read-only.
// [Cache.View] lays out one mod of a manifest as a mod folder under the
// cache (hard links to the cached files, or copies), never in the
// player's own mod folders, through an os.Root so that no path or link
// leads out of the cache. [Cache.Verify] re-hashes it offline;
// [Cache.Prune] drops what is no longer wanted.
//
// # The transfer
//
// [Handler] serves GET /content/<sha256> for the files a built manifest
// publishes, and nothing else (any other hash is 404), with Range and
// HEAD (http.ServeContent); files are opened where Build found them, by
// an os.Root on their mod folder, and their size checked, never hashed
// again on request. A whole text file, or an image or sound format that
// is not compressed itself, is sent gzip-compressed to a client that
// accepts it; a range never is. GET /content/manifest serves the
// manifest. A host hands the same Handler's [Handler.Manifest] and
// [Handler.Open] to its session connections, which send the manifest and
// files in Server_Content chunks (section 17.4 of the protocol);
// [Handler.Gate] and [Handler.Pace] let it share its upload slots and
// cap with HTTP.
//
// [Fetcher] downloads the files a joiner lacks from a [Source]
// ([HTTPSource], or the session connection: join.ContentConn): it
// checks the count, each size and the total against its limits first,
// resumes a partial download with Range, refuses a body longer than the
// manifest declares (decompressed, and a compressed stream longer than
// the file could need) or one it did not ask to be compressed, checks
// every hash before a file enters the cache, and fetches a file whose
// hash was wrong once more from its start. A download under way is
// locked (an operating-system lock), so two joiners sharing a cache
// never write one file both ([ErrBusy]). [Compare] says, mod by mod,
// what a joiner lacks; [Cache.Dirs] gives the folders to load the host's
// mods from.
//
// # The browser
//
// A browser has no folder to lay mods out in: [MemLoader] takes each
// shared file from the files the player has built in ([HashFS]), a
// [Store] (the page's Cache Storage; [MapStore] in memory) or the host,
// whole, checks every file's size and SHA-256 before use whatever it came
// from, and gives the mods as file systems in memory for defs.ScanFS.
//
// # Offline
//
// A view remembers the manifest it was laid out from ([Cache.Remember]),
// so [Cache.Owners] names the mod files each cached file is, and marks
// the files it links used (their modification time), so [Cache.Prune] by
// age drops what no join used lately.
package modsync
