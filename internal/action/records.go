package action

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/snapply/snapply/internal/apply"
)

// lastApplyStore is the engine's Records (engine.Engine.Records): a job
// does not have the store of the job that last applied the inventory, so
// it downloads that run's store artifact (the inventory records the run
// ID) for the known test, into a temporary directory that the step removes
// when it ends. When the artifact cannot be had (absent, expired, no
// "actions: read"), it says so in one notice, and every object is dry-run.
func (r *run) lastApplyStore(ctx context.Context, inv *apply.Inventory) (path, line string) {
	none := func(format string, args ...any) (string, string) {
		line := fmt.Sprintf(format, args...)
		r.a.Noticef("no record of the last apply, every object is dry-run: %s", OneLine(line))
		return "", line
	}
	runID := inv.Annotations[apply.LastRunIDAnnotation]
	id, err := strconv.ParseInt(runID, 10, 64)
	switch {
	case runID == "":
		return none("the inventory %s names no run of the last apply", inv)
	case err != nil || id <= 0:
		return none("the inventory %s names run %q, not a run ID", inv, runID)
	case r.deps.GitHub == nil:
		return none("the store artifact of run %d cannot be downloaded: %v", id, r.deps.GitHubErr)
	}
	dir, err := os.MkdirTemp("", "snapply-records-")
	if err != nil {
		return none("%v", err)
	}
	r.temp = append(r.temp, dir)
	downloaded, err := r.deps.GitHub.DownloadRunArtifact(ctx, id, "", r.cfg.ArtifactPrefix(runID), dir)
	if err != nil {
		return none("%v", err)
	}
	return downloaded, fmt.Sprintf("downloaded the store of run %d, which last applied %s, for the known test", id, inv)
}

// removeTemp removes the temporary directories of the step.
func (r *run) removeTemp() {
	for _, dir := range r.temp {
		_ = os.RemoveAll(dir)
	}
}
