// Package report renders a plan for people and programs: compact terminal
// text (like `terraform plan`), markdown for a pull-request comment or a
// GitHub job summary, and JSON with a stable contract.
//
// The package is pure: it writes only to the io.Writer it is given and
// returns strings otherwise. It trusts the plan it renders: Secret values
// are redacted by package plan before a diff reaches a report, and the
// summary counts are the plan's own Summary.
//
// Every renderer is deterministic: the same plan and options give the same
// bytes, so reports can be golden-tested and a sticky comment can be
// skipped when nothing changed.
package report
