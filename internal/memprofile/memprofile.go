// Package memprofile writes heap profiles of a snapply process for memory
// measurements (hack/loadbench.sh sets SNAPPLY_MEMPROFILE), and CPU
// profiles for time measurements (SNAPPLY_CPUPROFILE). It is off unless
// asked for.
package memprofile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// Start is a hidden hook for memory measurements
// (hack/loadbench.sh): when path is set, from SNAPPLY_MEMPROFILE, it writes
// a heap profile to path.peak after each new peak of the live heap (by a
// tenth or more), so that its inuse_space shows what held the memory then,
// and one to path at exit, whose alloc_space shows everything allocated. It
// returns the function that stops it and writes the last ones.
func Start(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
		var peak, peakCycle uint64
		pending := false
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if pending {
					writeHeapProfile(path + ".peak")
				}
				return
			case <-tick.C:
			}
			metrics.Read(samples)
			if samples[0].Value.Kind() != metrics.KindUint64 || samples[1].Value.Kind() != metrics.KindUint64 {
				continue
			}
			live, cycle := samples[0].Value.Uint64(), samples[1].Value.Uint64()
			if live > peak+peak/10 {
				peak, peakCycle, pending = live, cycle, true
			}
			// The heap profile shows the heap of a cycle only once the
			// next one has ended.
			if pending && cycle > peakCycle {
				writeHeapProfile(path + ".peak")
				pending = false
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		runtime.GC() // the inuse figures are those of a finished collection
		writeHeapProfile(path)
	}
}

// writeHeapProfile writes the heap profile to path, or says on stderr why
// it could not.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "snapply: heap profile %s: %v\n", path, err)
	}
}

// CPU is a hidden hook for time measurements (hack/bench.sh sets
// SNAPPLY_CPUPROFILE): when path is set, it writes a CPU profile of the
// whole process to path. It returns the function that stops it.
func CPU(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
