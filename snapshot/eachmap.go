package snapshot

import (
	"fmt"
	"runtime"
	"sync"
)

// eachMap calls f for every map of maps, in parallel on up to workers
// goroutines (0 or less means GOMAXPROCS), and waits for all of them.
// The error is that of the first map in order that failed, naming it.
// f may write only to what belongs to its own index.
func eachMap(maps []MapPoint, workers int, f func(i int, m MapPoint) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, len(maps))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(maps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				errs[i] = f(i, maps[i])
			}
		}()
	}
	for i := range maps {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("map %d: %w", maps[i].ID, err)
		}
	}
	return nil
}
