// Command benchdefs measures def scanning: it generates a synthetic content
// set (mods with abstract parents, multi-level inheritance, list appends
// and cross-mod overrides) in a temporary folder, scans it with
// defs.ScanDirs and prints scan time, defs per second, core counts and
// peak memory.
//
//	go run ./scripts/benchdefs [-mods 10] [-files 210] [-defs 25] [-runs 3]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/lockhost/lockhost/defs"
)

// options are the command line's flags.
type options struct {
	mods, files, perFile int
	runs, workers        int
	keep                 string // -dir
	cpuprof, memprof     string
}

// parseFlags parses the command line.
func parseFlags() options {
	var o options
	flag.IntVar(&o.mods, "mods", 10, "number of mods")
	flag.IntVar(&o.files, "files", 210, "def files per mod")
	flag.IntVar(&o.perFile, "defs", 25, "concrete defs per file (plus one abstract parent)")
	flag.IntVar(&o.runs, "runs", 3, "number of timed scans")
	flag.IntVar(&o.workers, "workers", 0, "scan workers (0 = GOMAXPROCS)")
	flag.StringVar(&o.keep, "dir", "", "generate into this folder and keep it (default: a temporary folder, removed)")
	flag.StringVar(&o.cpuprof, "cpuprofile", "", "write a CPU profile of the timed scans to this file")
	flag.StringVar(&o.memprof, "memprofile", "", "write an allocation profile to this file after the scans")
	flag.Parse()
	return o
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("benchdefs: ")
	o := parseFlags()

	dir := o.keep
	if dir == "" {
		d, err := os.MkdirTemp("", "benchdefs-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	t0 := time.Now()
	modDirs, nFiles, nBytes, err := generate(dir, o.mods, o.files, o.perFile)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("generated %d mods, %d files, %.1f MiB in %v (%s)\n", len(modDirs), nFiles, float64(nBytes)/(1<<20), time.Since(t0).Round(time.Millisecond), dir)
	fmt.Printf("GOMAXPROCS=%d NumCPU=%d %s/%s %s\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())

	if o.cpuprof != "" {
		startCPUProfile(o.cpuprof)
		defer pprof.StopCPUProfile()
	}

	var times []time.Duration
	var set *defs.Set
	var peakHeap uint64
	for i := 0; i < o.runs; i++ {
		set = nil // let the previous run's set go before the next one's GC
		var el time.Duration
		el, set = scan(i, modDirs, o.workers, &peakHeap)
		times = append(times, el)
	}
	if o.memprof != "" {
		writeAllocProfile(o.memprof)
	}
	slices.Sort(times)
	n := countDefs(set)
	med := times[len(times)/2]
	fmt.Printf("scan: best %v, median %v; %.0f defs/s (median) over %d files\n", times[0].Round(time.Millisecond), med.Round(time.Millisecond), float64(n)/med.Seconds(), nFiles)
	fmt.Printf("peak heap in use (sampled every 5 ms) %.0f MiB; process peak RSS (VmHWM) %s\n", float64(peakHeap)/(1<<20), vmHWM())
}

// startCPUProfile starts the CPU profile into a new file name.
func startCPUProfile(name string) {
	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
}

// scan times run i, one scan of modDirs with workers, prints its line
// and returns its time and the set scanned; peakHeap grows to the
// largest heap in use seen during the scan.
func scan(i int, modDirs []string, workers int, peakHeap *uint64) (time.Duration, *defs.Set) {
	runtime.GC()
	stop := sampleHeap(peakHeap)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	s, err := defs.ScanDirs(modDirs, defs.Options{Workers: workers})
	el := time.Since(start)
	stop()
	if err != nil {
		log.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	n := countDefs(s)
	fmt.Printf("run %d: %v, %d defs, %.0f defs/s, %d databases, %d errors, %d warnings, allocated %.0f MiB, %d GCs\n",
		i+1, el.Round(time.Millisecond), n, float64(n)/el.Seconds(), len(s.Databases), len(s.Errors), len(s.Warnings),
		float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), after.NumGC-before.NumGC)
	if len(s.Errors) > 0 {
		log.Fatalf("unexpected errors, first: %v", s.Errors[0])
	}
	return el, s
}

// writeAllocProfile writes the allocation profile to a new file name.
func writeAllocProfile(name string) {
	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
	f.Close()
}

func countDefs(s *defs.Set) int {
	n := 0
	for _, db := range s.Databases {
		n += db.Count()
	}
	return n
}

// sampleHeap records the largest HeapInuse seen until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

func vmHWM() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

var categories = []string{"ThingDef", "RecipeDef", "PawnKindDef", "HediffDef", "ResearchProjectDef", "TerrainDef", "SoundDef", "JobDef"}

// generate writes the content set and returns the mod folders in load
// order, the number of files and bytes written.
func generate(root string, mods, files, perFile int) ([]string, int, int64, error) {
	var dirs []string
	nFiles := 0
	var nBytes int64
	var b strings.Builder
	for m := 0; m < mods; m++ {
		md := filepath.Join(root, fmt.Sprintf("mod%02d", m))
		dirs = append(dirs, md)
		if err := write(filepath.Join(md, "About", "About.xml"), aboutXML(m)); err != nil {
			return nil, 0, 0, err
		}
		// Shared grand-parents for this mod.
		b.Reset()
		writeBases(&b, m)
		nBytes += int64(b.Len())
		if err := write(filepath.Join(md, "Defs", "Bases.xml"), b.String()); err != nil {
			return nil, 0, 0, err
		}
		nFiles++
		for f := 0; f < files; f++ {
			cat := categories[f%len(categories)]
			b.Reset()
			writeDefFile(&b, m, f, perFile)
			nBytes += int64(b.Len())
			if err := write(filepath.Join(md, "Defs", cat+"s", fmt.Sprintf("File%04d.xml", f)), b.String()); err != nil {
				return nil, 0, 0, err
			}
			nFiles++
		}
	}
	return dirs, nFiles, nBytes, nil
}

// aboutXML is the About.xml of mod m.
func aboutXML(m int) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>
<ModMetaData>
  <packageId>bench.mod%02d</packageId>
  <name>Bench mod %d</name>
  <modVersion>1.0.%d</modVersion>
  <supportedVersions><li>1.5</li></supportedVersions>
</ModMetaData>
`, m, m, m)
}

// writeBases writes mod m's Bases.xml to b: one abstract base per
// category.
func writeBases(b *strings.Builder, m int) {
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Defs>\n")
	for _, cat := range categories {
		fmt.Fprintf(b, `  <%s Name="M%dBase%s" Abstract="True">
    <description>Base of every %s in mod %d.</description>
    <statBases>
      <MaxHitPoints>100</MaxHitPoints>
      <Mass>1</Mass>
    </statBases>
    <comps>
      <li Class="CompProperties_Forbiddable"/>
    </comps>
    <tradeTags><li>Base</li></tradeTags>
  </%s>
`, cat, m, cat, cat, m, cat)
	}
	b.WriteString("</Defs>\n")
}

// writeDefFile writes def file f of mod m to b: an abstract parent on
// the mod's base of the file's category, and perFile defs on it.
func writeDefFile(b *strings.Builder, m, f, perFile int) {
	cat := categories[f%len(categories)]
	b.WriteString("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Defs>\n")
	fmt.Fprintf(b, `  <!-- file %d of mod %d -->
  <%s Name="M%dF%dParent" ParentName="M%dBase%s" Abstract="True">
    <statBases><Mass>%d</Mass><Beauty>-%d</Beauty></statBases>
    <comps><li Class="CompProperties_Flickable"><commandTexture>UI/Flick%d</commandTexture></li></comps>
    <tradeTags Inherit="False"><li>File%d</li></tradeTags>
  </%s>
`, f, m, cat, m, f, m, cat, f%7+1, f%5, f, f, cat)
	for d := 0; d < perFile; d++ {
		name := fmt.Sprintf("M%dF%dD%d", m, f, d)
		// A few defs in later mods override earlier mods' defs.
		if m > 0 && d == 0 && f%10 == 0 {
			name = fmt.Sprintf("M%dF%dD%d", m-1, f, d)
		}
		fmt.Fprintf(b, `  <%s ParentName="M%dF%dParent">
    <defName>%s</defName>
    <label>bench item %d-%d-%d</label>
    <description>A generated def used to measure scanning speed.
It has a second line &amp; an entity.</description>
    <statBases>
      <MarketValue>%d.5</MarketValue>
      <WorkToMake>%d</WorkToMake>
    </statBases>
    <stackLimit>%d</stackLimit>
    <graphicData Class="GraphicData">
      <texPath>Things/Item/Bench%d</texPath>
      <graphicClass>Graphic_Single</graphicClass>
      <drawSize>(1, 1)</drawSize>
    </graphicData>
    <thingCategories><li>Items</li><li>Cat%d</li></thingCategories>
  </%s>
`, cat, m, f, name, m, f, d, d*3, 100+d, 75, d%13, d%4, cat)
	}
	b.WriteString("</Defs>\n")
}

func write(p, s string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(s), 0o644)
}
