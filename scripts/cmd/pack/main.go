// Command pack writes a release archive: a zip or a gzipped tar (by the
// output's name) holding the given files in one folder, executables
// marked so, every entry dated at the same time so that the same files
// make the same archive.
//
// Usage: go run ./scripts/cmd/pack -o OUT.zip|OUT.tar.gz -dir FOLDER [-exec NAME...] FILE...
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// stamp is every entry's time: archives of the same files are the same.
var stamp = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("o", "", "the archive to write, ending .zip or .tar.gz")
	dir := flag.String("dir", "", "the folder the files go in, inside the archive")
	execs := flag.String("exec", "", "comma-separated names of the files that are programs")
	flag.Parse()
	if *out == "" || *dir == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: pack -o OUT.zip|OUT.tar.gz -dir FOLDER [-exec a,b] FILE...")
		os.Exit(2)
	}
	if err := pack(*out, *dir, strings.Split(*execs, ","), flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
}

// entry is one file to archive.
type entry struct {
	name string // inside the archive
	mode os.FileMode
	src  string
}

func pack(out, dir string, execs, files []string) error {
	var entries []entry
	for _, f := range files {
		mode := os.FileMode(0o644)
		if slices.Contains(execs, filepath.Base(f)) {
			mode = 0o755
		}
		entries = append(entries, entry{name: path.Join(dir, filepath.Base(f)), mode: mode, src: f})
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	switch {
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(w, entries)
	case strings.HasSuffix(out, ".tar.gz"):
		err = writeTarGz(w, entries)
	default:
		err = errors.New("the archive's name must end .zip or .tar.gz")
	}
	return errors.Join(err, w.Close())
}

func writeZip(w io.Writer, entries []entry) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: stamp}
		h.SetMode(e.mode)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if err := copyFile(f, e.src); err != nil {
			return err
		}
	}
	return zw.Close()
}

func writeTarGz(w io.Writer, entries []entry) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		st, err := os.Stat(e.src)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: e.name, Mode: int64(e.mode), Size: st.Size(), ModTime: stamp, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if err := copyFile(tw, e.src); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), gz.Close())
}

func copyFile(w io.Writer, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return nil
}
