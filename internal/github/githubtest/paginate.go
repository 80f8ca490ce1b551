package githubtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

type prefixKey struct{}

// withPrefix records in ctx the API prefix a request came in with.
func withPrefix(ctx context.Context, prefix string) context.Context {
	return context.WithValue(ctx, prefixKey{}, prefix)
}

// apiBase returns the base URL of the API as the request reached it, such
// as "http://127.0.0.1:1234/api/v3".
func apiBase(r *http.Request) string {
	prefix, _ := r.Context().Value(prefixKey{}).(string)
	return "http://" + r.Host + prefix
}

// webBase returns the base URL of the web pages, such as
// "http://127.0.0.1:1234".
func webBase(r *http.Request) string {
	return "http://" + r.Host
}

// page returns the bounds of the page of n items that r asks for, as GitHub
// reads page (from 1) and per_page (default 30, at most 100), and sets the
// Link header to the next and last pages.
func page(w http.ResponseWriter, r *http.Request, n int) (start, end int) {
	q := r.URL.Query()
	perPage := 30
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	p := 1
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		p = v
	}
	last := max(1, (n+perPage-1)/perPage)
	start = min(n, (p-1)*perPage)
	end = min(n, start+perPage)

	link := func(p int, rel string) string {
		q := url.Values{}
		for k, v := range r.URL.Query() {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		prefix, _ := r.Context().Value(prefixKey{}).(string)
		return fmt.Sprintf(`<http://%s%s%s?%s>; rel="%s"`, r.Host, prefix, r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if p > 1 {
		links = append(links, link(p-1, "prev"), link(1, "first"))
	}
	if p < last {
		links = append(links, link(p+1, "next"), link(last, "last"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	return start, end
}
