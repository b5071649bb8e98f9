package provenance

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// shortLen is the length of an abbreviated commit hash, as git log
// --oneline prints it and the documentation cites commits.
const shortLen = 7

var commit = sync.OnceValue(func() string {
	if c := fromBuildInfo(); c != "" {
		return c
	}
	if c := fromGit(); c != "" {
		return c
	}
	return "unknown"
})

// Commit is the abbreviated git commit of the source the running command
// was built from ("unknown" outside a git checkout), with "+dirty" when
// tracked files had changes.
func Commit() string { return commit() }

// Date is today's date in UTC, as 2006-01-02.
func Date() string { return time.Now().UTC().Format("2006-01-02") }

func fromBuildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return format(rev, dirty)
}

// fromGit asks git about the working directory: go run does not stamp
// the revision into the binary it builds.
func fromGit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return ""
	}
	return format(rev, len(strings.TrimSpace(string(status))) > 0)
}

func format(rev string, dirty bool) string {
	if rev == "" {
		return ""
	}
	if len(rev) > shortLen {
		rev = rev[:shortLen]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
