// Package action is snapply's side of the GitHub Actions runner: it reads
// the action's inputs and the event that started the workflow, decides what
// the run does (plan, apply, rollback or nothing), and speaks the runner's
// protocol — step outputs, the job summary, masks, annotations and log
// groups. It makes no REST call and never reaches a cluster: package github
// talks to the REST API, and the command layer (snapply action) glues both
// to the pipeline.
//
// Every function takes the *githubactions.Action it writes through, so
// tests run it against a simulated runner (githubactions.WithGetenv and
// WithWriter). Outside a runner — GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
// unset — outputs and the summary are skipped instead of panicking as
// go-githubactions would.
//
// Secrets: Load masks the github-token input, WriteKubeconfig masks the
// kubeconfig and its credentials, and Mask masks the clear values of the
// desired Secrets. Call them before anything is logged: the runner hides a
// value only in lines written after its ::add-mask::.
package action
