// Package github is snapply's client of the GitHub REST API: the sticky pull
// request comment (UpsertComment), the pull request a pushed commit merged
// (MergedPullRequest) and the download of a past run's store artifact
// (DownloadRunArtifact).
//
// It talks to GitHub through go-github v62, behind API, an interface that
// lists only the calls it makes. The base URL is GITHUB_API_URL's value, so
// GitHub Enterprise Server works, and tests point it at githubtest's fake
// server. A token without a permission that a call needs gives a
// *PermissionError that names the permission, which the caller can turn
// into a warning.
//
// The package never prints or logs; it returns data and errors.
package github
