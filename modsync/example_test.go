package modsync_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/modsync"
)

// Example shows the whole of content sync as host and join wire it in:
// the host builds and serves its manifest; the joiner compares it with
// its own mods, prints a line per mod it lacks, fetches what it lacks
// into its cache and gets the folders to load.
func Example() {
	// Host: --share-content, --share-content-except PKG.
	hostSet, err := defs.ScanDirs([]string{"Mods/Core", "Mods/MyMod"}, defs.Options{GameVersion: "1.6", ActiveComplete: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	published, err := modsync.Build(hostSet, modsync.BuildOptions{Except: []string{"some.paid.mod"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	handler, err := modsync.NewHandler(published) // on the --http listener, under /content/
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	// Joiner: --content BASE… --fetch-content --content-cache DIR.
	src := modsync.HTTPSource{Base: srv.URL}
	hostM, _, err := src.Manifest(context.Background(), modsync.DefaultLimits)
	if err != nil {
		fmt.Println(err)
		return
	}
	mySet, err := defs.ScanDirs([]string{"MyMods/Core"}, defs.Options{GameVersion: hostM.GameVersion})
	if err != nil {
		fmt.Println(err)
		return
	}
	mine, err := modsync.Build(mySet, modsync.BuildOptions{}) // hashes the player's own files, to copy rather than fetch them
	if err != nil {
		fmt.Println(err)
		return
	}
	states := modsync.Compare(hostM, mine)
	lacking := map[string]bool{}
	for _, s := range states {
		if s.State != modsync.Same {
			fmt.Println(s)
			lacking[s.PackageID] = true
		}
	}
	dir, err := modsync.DefaultCacheDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	cache, err := modsync.OpenCache(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	f := &modsync.Fetcher{Source: src, Cache: cache, Limits: modsync.DefaultLimits, Local: mine.LocalFiles()}
	st, err := f.Fetch(context.Background(), modsync.Need(hostM, func(d *modsync.Mod) bool { return lacking[d.PackageID] }))
	if err != nil {
		fmt.Println(err) // run again to resume
		return
	}
	fmt.Printf("fetched %d files (%d bytes on the wire), %d already cached\n", st.Fetched, st.FetchedBytes, st.Cached)
	dirs, err := cache.Dirs(hostM, mine) // then gamecontent.Load(dirs, hostM.GameVersion)
	fmt.Println(dirs, err)
}
