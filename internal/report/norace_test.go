//go:build !race

package report

// raceEnabled: the race detector slows the code down several times over,
// so timing limits are not checked.
const raceEnabled = false
