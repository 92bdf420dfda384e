// Command crash-saves kills a saving host with SIGKILL at random moments
// and checks, after every kill, that every save file it left loads and
// validates: the newest one must always be usable. It prints what it did
// and exits 1 on the first bad save.
//
//	go run ./scripts/cmd/crash-saves [-n 50] [-autosave 150ms]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/procstat"
)

func main() {
	n := flag.Int("n", 50, "kills")
	autosave := flag.Duration("autosave", 150*time.Millisecond, "the host's autosave interval")
	seed := flag.Uint64("seed", 1, "seed of the kill times")
	flag.Parse()
	if err := run(*n, *autosave, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "crash-saves:", err)
		os.Exit(1)
	}
}

func run(n int, autosave time.Duration, seed uint64) error {
	dir, err := os.MkdirTemp("", "crashsaves-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := procstat.BuildTool(dir, "./cmd/host")
	if err != nil {
		return err
	}
	content, _, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	save := filepath.Join(dir, "colony.lhsave")
	rng := rand.New(rand.NewPCG(seed, 99))
	checked := 0
	for i := 0; i < n; i++ {
		// Until a save exists each run starts a new world; every later one
		// is a crash restart with the same command, which loads the newest
		// valid of the save and its autosaves by itself.
		args := []string{"serve", "--listen", "127.0.0.1:0", "--save", save, "--recover",
			"--autosave", autosave.String(), "--keep", "3", "--log-level", "warn", "--world-mib", "8"}
		if autos, _ := saves.Autosaves(save); len(autos) == 0 {
			if _, err := os.Stat(save); err != nil {
				args = append(args, "--new")
			}
		}
		cmd := exec.Command(bin, args...)
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			return err
		}
		// Kill at a random moment: often in the middle of an autosave.
		wait := time.Duration(300+rng.IntN(1200)) * time.Millisecond
		time.Sleep(wait)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		// Every save file, each read and validated once, newest first.
		files, err := saves.List(dir)
		if err != nil {
			return err
		}
		for i, in := range files {
			if in.Err == nil {
				files[i] = saves.Inspect(in.Path) // List reads headers only
			}
		}
		if len(files) == 0 {
			fmt.Printf("kill %2d after %4d ms: no save yet\n", i+1, wait.Milliseconds())
			continue
		}
		for _, in := range files {
			if in.Err != nil {
				return fmt.Errorf("kill %d after %v: %s does not validate: %v\nhost said:\n%s", i+1, wait, in.Path, in.Err, errOut.String())
			}
		}
		newest := files[0]
		f, err := saves.Read(newest.Path)
		if err != nil {
			return fmt.Errorf("kill %d: newest save %s: %v", i+1, newest.Path, err)
		}
		if _, err := saves.Load(f, nil, colony.MapLoader(content), hostcontent.MaxSaveRaw); err != nil {
			return fmt.Errorf("kill %d: newest save %s does not load: %v", i+1, newest.Path, err)
		}
		checked++
		fmt.Printf("kill %2d after %4d ms: %d save files, all valid; newest %s (tick %d) loads\n",
			i+1, wait.Milliseconds(), len(files), filepath.Base(newest.Path), newest.Meta.Tick)
	}
	fmt.Printf("%d kills, %d checks: every save file validated and the newest loaded every time\n", n, checked)
	return nil
}
