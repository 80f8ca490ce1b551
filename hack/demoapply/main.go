// Command demoapply server-side applies a rendered path under snapply's
// field manager: the baseline of `make demo` until `snapply apply` exists.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/render"
)

func main() {
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "demoapply:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string) error {
	objs, err := render.Render(ctx, path, render.DefaultOptions())
	if err != nil {
		return err
	}
	c, err := kube.NewClient(genericclioptions.NewConfigFlags(true), kube.DefaultOptions())
	if err != nil {
		return err
	}
	for _, o := range objs {
		m, err := c.Mapping(o.Ref.GroupVersionKind())
		if err != nil {
			return fmt.Errorf("%s: %w", o.Ref, err)
		}
		if _, err := c.Apply(ctx, o.Obj, m, kube.ApplyOptions{}); err != nil {
			return fmt.Errorf("%s: %w", o.Ref, err)
		}
		fmt.Printf("applied %s\n", o.Ref)
	}
	return nil
}
