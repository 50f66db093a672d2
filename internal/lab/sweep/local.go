package sweep

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Pending lists the indices of the runs of m in dir that are not finished. A run whose directory
// conflicts with the manifest is reported as an error and not listed.
func Pending(dir string, m Manifest) ([]int, error) {
	var out []int
	var errs []error
	for _, r := range m.Runs {
		st, err := Inspect(dir, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if st.State != Finished {
			out = append(out, r.Index)
		}
	}
	return out, errors.Join(errs...)
}

// Local runs launch(ctx, i) for every index, at most n at once, in order. It starts nothing new
// once ctx is cancelled, and returns every launch's error joined (nil when all succeeded).
func Local(ctx context.Context, n int, indices []int, launch func(ctx context.Context, i int) error) error {
	if n < 1 {
		return fmt.Errorf("sweep: %d runs at once, want >= 1", n)
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, n)
	for _, i := range indices {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := launch(ctx, i); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("run %d: %w", i, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("sweep: local runner stopped: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}
