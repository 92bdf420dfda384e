// Package defs scans RimWorld-style content folders, builds the def
// databases a lockstep session must agree on, hashes them, exports and
// imports manifests, compares summaries the way the host does during the
// join handshake, and explains exactly which mods and defs differ.
//
// It does no networking: the host and the joiner exchange []Summary and
// *Manifest values over their own wire. The host checks a client's
// summaries with [Compare]; on a mismatch it can send
// hostManifest.Only(differingTypes) so that the client can run [Diff] and
// print which defs differ.
//
// # Content sets
//
// A content set is an ordered list of mod folders (the load order). Each
// mod folder holds About/About.xml, whose <packageId>, <name> and
// <modVersion> are recorded. A mod from before packageId existed (no
// <packageId>) is scanned with a warning under an ID derived from its
// folder name: "legacy." and the folder name in lower case, characters
// other than letters, digits, '.' and '_' replaced by '_'. Package IDs are
// compared case insensitively and must be unique within a set. [LoadOrder] turns a
// ModsConfig.xml (<activeMods><li>packageId</li>…) and a list of folders
// to search into such a list.
//
// # Folder selection rule
//
// Each mod contributes the files *.xml (extension matched case
// insensitively) found at any depth under <F>/Defs for each of its load
// folders F. The load folders are chosen as follows, given
// Options.GameVersion V (empty means [DefaultGameVersion], the newest game
// version this package knows; every tool of lockhost picks folders through
// this one rule, so "defs scan", "host serve" and "join" read the same
// folders for the same version):
//
//  1. If LoadFolders.xml (found whatever its letter case, as the game does
//     on Windows) exists at the mod root, one of its child elements is
//     chosen: the one named "v"+M or M, where M is V's major.minor (1.6),
//     if it lists any <li>; else the one with the highest version not
//     above V (which may be that same, empty element); else <default>.
//     Versions compare numerically part by part. The chosen element's <li>
//     entries are the load folders, in order; when none is active the mod
//     loads nothing, as in the game. An <li> of "/" (or empty) is the mod
//     root; other entries are paths relative to the mod root (backslashes
//     are accepted; ".." cannot leave the mod and is warned about). An <li>
//     with IfModActive="id1, id2" is used only if one of those package IDs
//     is in the set, with IfModActiveAll="…" only if every one is (an
//     empty entry names no mod), with IfModNotActive="…" only if none is;
//     with several of them, only if all hold. The game reads no other
//     condition (an IfModNotActiveAll is ignored). Folders that do not
//     exist are skipped silently.
//  2. Otherwise (no LoadFolders.xml, or no element chosen): the mod root,
//     then "Common" if it exists, then the version folder: the folder
//     named M if it exists; else, among the folders whose names parse as a
//     version (the first two dot-separated parts integers: "1.5", "1.5.2";
//     not "v1.5"), the highest not above V, or when all are above V the
//     lowest; that version's folder "major.minor" is read if it exists.
//
// Load folders are listed in increasing priority: when two load folders
// hold a file with the same path relative to the folder (e.g.
// Defs/WorkTypeDefs/Work.xml in both / and 1.5/), only the file from the
// later folder is loaded. Paths are compared as the game compares them,
// letter case included: Defs/work.xml in 1.5/ does not hide Defs/Work.xml
// in /, and both are loaded. As in the game, a mod's files
// are then read from its highest-priority folder down to its root (so the
// version folder's come first), and within a folder as the game lists
// them on Windows: a folder's own files before those of its subfolders,
// subfolders one after the other (depth first), names in NTFS order
// (compared in upper case, so "a.xml" comes before "B.xml"). This order
// decides which of one mod's two defs of a name is first: Defs/Things.xml
// is read before Defs/Royalty/Crates.xml.
// Def.File is the path within the mod (e.g.
// "1.5/Defs/WorkTypeDefs/Work.xml"); Mod.Folders records the folders used.
// Patches/ folders are not applied.
//
// # Defs and inheritance
//
// A def file has a root element (normally <Defs>; another name is accepted
// with a warning); each child element is one def whose element name is
// its database type and whose <defName> text names it. The def types the
// game names itself may omit <defName>: a SongDef is named by the last
// part of its <clipPath> (split at / and \), a ScatterableDef is named
// "Scatterable_" followed by its <texturePath>. A tag spelled <DefName>
// (or another letter case), as old content has it, is read as <defName>
// with a warning, as the game's case-insensitive fallback does. A def element with
// Abstract="True" belongs to no database. A def element with Name="X" can
// be a parent; one with ParentName="X" inherits from it. When several mods
// define a parent named X, the one in the child's own mod is used, else the
// one from the latest mod loaded before the child's mod. As in the game, a
// parent in a mod loaded after the child's is never used: the game logs
// "Could not find parent node" and loads the def as written. Such a def is
// kept as written, the parent's name in its hash, with a warning naming
// the later mod; what that later parent holds does not change it, and it
// is not missing a parent (below): both sides of a diff load it the same.
// (The game would take a parent of that name from a mod loaded before the
// child's that was not scanned; in practice that is Core, the same on both
// sides.) A second parent of the same name in one mod is ignored with a
// warning.
//
// Inheritance follows RimWorld's merge rule, applied recursively from the
// def element down, child over resolved parent:
//
//   - an element with Inherit="False" replaces the parent's element
//     entirely;
//   - otherwise the child element's attributes replace the parent's, as
//     the game removes the parent's before it copies the child's: one the
//     child does not repeat (a Class, say) is not inherited;
//   - if the child element has text, it replaces the parent's text and
//     children;
//   - if the child element is empty (no text, no child elements), the
//     parent's text and children are kept;
//   - otherwise each child element <li> is appended after the parent's
//     children, and each other child element is merged into the first
//     element of the same name (appended if there is none).
//
// The attributes Name, ParentName and Abstract of a def element and
// Inherit on any element are consumed by inheritance: they do not appear
// in the resolved Node and do not affect hashes.
//
// Duplicates follow the game: within one mod the first def of a type and
// defName (in the file order above) is kept and later ones are skipped;
// across mods, a later mod's def replaces an earlier mod's, except that
// Core (packageId Ludeon.RimWorld) never replaces another mod's def: the
// game applies Core first wherever it is in the load order. Each is a
// warning naming both places.
//
// A def whose parent (or further ancestor) is in no scanned mod, typically
// one from Core or a DLC that was not scanned, is missing it. It is kept:
// it is resolved as far as the scanned mods allow, and its resolved
// element carries the attribute ParentName="X" naming the missing parent,
// so its hash covers its own XML and that name. Such defs are listed in Set.Unresolved and
// marked in manifests; a [Report] with them is not Complete.
//
// # MayRequire
//
// As in the game, after inheritance a def whose own element has
// MayRequire="id1,id2" (every mod needed; an empty value names no mod) or
// MayRequireAnyOf="id1,id2" (one needed) that the active set does not
// meet is not loaded (it is listed in Set.Skipped), before duplicates are
// looked at; and an <li> at any depth with such an attribute (an empty
// value is no condition there) is dropped.
//
// Before inheritance, the game registers no parent (abstract or not)
// whose own MayRequire is not met: no def inherits from it, and its Name
// stays free in its mod for another parent. A child that finds no other
// parent loads without the parent's fields (the game logs "Could not find
// parent node"); like a child of a later mod's parent, it is kept as
// written with a warning, and is not missing a parent. MayRequireAnyOf is not looked at there: a def skipped for it
// can still be a parent. When such a parent's MayRequire names a mod
// whose state is unknown, the parent is used and every def inheriting
// from it is undecided on that mod too.
// Package IDs compare case insensitively, trimmed, and an active mod's
// trailing "_steam" is ignored. The active set is the scanned mods plus
// Options.Active; other mods are inactive when Options.ActiveComplete is
// set, else unknown: a def or item whose condition depends on an unknown
// mod is kept as written, the def is listed in Set.Undecided, and the set
// is not Complete. Once applied, both attributes are removed from the
// resolved element, so they never change a hash by themselves.
// LoadFolders.xml's conditions see the same active set (an unknown mod
// counts as inactive there). Options.Inactive declares mods inactive
// without declaring the whole set.
//
// Because the game drops a def whose MayRequire is not met before it keeps
// the first of one mod's defs of a type and name, the order of a gated def
// and a plain one of the same name decides: with the plain one first, it
// is loaded whether or not the required mod is active (the gated one is
// dropped, or comes second and is skipped), so nothing is undecided; with
// the gated one first, the gated one is loaded when the mod is active and
// the plain one when it is not, so the def depends on that mod. Across
// mods the later mod's def wins as usual, so a plain def in a later mod
// decides it too.
//
// [DecideDiff] answers a comparison that depends on undeclared mods when
// the answer does not turn on them: it compares the sides again for each
// combination of those mods being active or not (at most
// [MaxDecideMods] of them); the sides are the same, or differ, if they do
// in every case, and otherwise the report names the mods it depends on and
// what differs in each case.
//
// A def without a name, in an inheritance cycle or whose parent has
// errors, and a file that is not well-formed XML, are errors naming the
// file and line; the def (or the whole file) is dropped and everything
// else is still scanned.
//
// # XML
//
// Def files are parsed by a small strict XML 1.0 parser: elements,
// attributes, character data, CDATA sections, comments, processing
// instructions, a DOCTYPE (skipped; it may not declare entities), the five
// predefined entities and numeric character references. Files are read in
// the encodings the game reads: UTF-8 (a byte-order mark is skipped),
// UTF-16 little or big endian (recognised by its byte-order mark or by
// "<?" in UTF-16), and any encoding an XML declaration names that the IANA
// registry knows, such as ISO-8859-1 or windows-1252 (decoded with
// golang.org/x/text). The same defs in any of them hash the same. An
// unknown encoding, or UTF-16 declared without a byte-order mark, is an
// error; nesting deeper than 256 elements and files above 64 MiB (before
// or after decoding) are rejected.
//
// # Scanning
//
// Files are read and parsed in parallel by at most Options.Workers
// goroutines; everything after parsing (inheritance, overrides, issue
// order) runs in load order, so a Set is the same whatever the number of
// workers. Errors and warnings are ordered by mod, file and line. Resolved
// Nodes share unchanged subtrees with their parents and must not be
// modified.
//
// # Hashes
//
// All hashes are XXH64 with seed 0 (github.com/cespare/xxhash/v2) over a
// canonical byte string, so they are equal on every machine. In the
// encoding, str(s) is uvarint(len(s)) followed by the UTF-8 bytes of s,
// and counts are uvarints (encoding/binary).
//
// The canonical form of a resolved element n is
//
//	node(n) = str(name) uvarint(#attrs) {str(attrName) str(attrValue)}…
//	          str(text) uvarint(#children) node(child)…
//
// with attributes sorted by name (then value), children in document order
// (after inheritance), and text being all character data and CDATA
// directly inside the element concatenated, entity references decoded,
// CR LF and lone CR turned into LF, then trimmed of leading and trailing
// XML white space (space, tab, CR, LF). White space inside a text value is
// kept. Attribute values have tab, CR and LF replaced by spaces (XML
// attribute normalisation). Comments, processing instructions, white space
// between elements and attribute order therefore never change a hash;
// any change of an element name, attribute, text or child order does.
//
// Def.Hash = XXH64(str(type) str(defName) node(resolved def element)).
//
// Database.Hash = XXH64(str(type) uvarint(count) {str(defName)
// uint64le(Def.Hash)}… ) over the database's defs sorted by defName (byte
// order). [DatabaseHash] computes it, which lets a manifest be checked
// against its per-def entries.
package defs
