// Command genfixture writes the plain-YAML fixture that `make bench`
// (hack/bench.sh) plans, diffs and applies: for each namespace PREFIX-NN
// (bench-NN by default) one multi-document file PREFIX-NN.yaml holding the
// Namespace and a mix of ConfigMaps, Deployments and Services, so that every
// object has a source file and line.
//
//	go run ./hack/genfixture --out DIR --namespaces 10 --per-namespace 100 --variant base|changed|changed1 [--prefix bench] [--seed 1]
//
// 10 namespaces of 100 objects give 1,010 objects (the Namespaces count
// too). The changed variant is the base with a deterministic ~10% of the
// objects of every namespace changed (a ConfigMap value; a Deployment's image
// tag and replicas; a Service port) and two objects added per namespace; the
// rest is byte-for-byte identical. The changed1 variant changes ~1% the
// same way and adds nothing. The same flags always write the same
// bytes; another --prefix writes the same objects into other namespaces, so
// that several tools can each apply their own copy to one cluster.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "genfixture:", err)
		}
		os.Exit(2)
	}
}

// run parses args, generates the fixture, writes it and prints a one-line
// summary to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("genfixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := DefaultOptions()
	out := fs.String("out", "", "directory to write into: created if missing, must be empty")
	fs.StringVar(&o.Prefix, "prefix", o.Prefix, "namespace name prefix: namespaces and files are PREFIX-00, PREFIX-01, ...")
	fs.IntVar(&o.Namespaces, "namespaces", o.Namespaces, "number of namespaces (one file each)")
	fs.IntVar(&o.PerNamespace, "per-namespace", o.PerNamespace, "objects per namespace, not counting the Namespace itself")
	variant := fs.String("variant", string(o.Variant), "base, changed (the base with ~10% of objects changed and a few added), or changed1 (~1% changed, none added)")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the generated content; the same seed writes the same bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return errors.New("--out is required")
	}
	o.Variant = Variant(*variant)
	fx, err := Generate(o)
	if err != nil {
		return err
	}
	if err := fx.Write(*out); err != nil {
		return err
	}
	s := fx.Stats
	_, err = fmt.Fprintf(stdout, "%s: wrote %d objects in %d files (%d changed, %d added)\n", *out, s.Objects, len(fx.Files), s.Changed, s.Added)
	return err
}
