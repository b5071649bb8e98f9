package gbs

import (
	"context"
	"runtime/pprof"
)

// labelKey is the CPU-profiler label (runtime/pprof) that names the stage
// of an Evidence call running: goroutines a stage starts (the flow's
// workers, concurrent log-density batches) inherit it, so that a profile
// of a call splits its cost by stage however the work is spread over
// threads. bench/profile_stages.py reads it.
const labelKey = "stage"

// inStage runs f with the profiler label naming the stage.
func (e *estimation) inStage(stage string, f func() error) error {
	var err error
	pprof.Do(e.ev.ctx, pprof.Labels(labelKey, stage), func(context.Context) { err = f() })
	return err
}
