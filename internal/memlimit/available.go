package memlimit

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Available returns the bytes of memory the process may still allocate,
// and false if it cannot be told (no /proc/meminfo).
func Available() (uint64, bool) {
	return availableUnder("/")
}

// availableUnder reads /proc and /sys/fs/cgroup below root, so that tests
// can supply their own files.
func availableUnder(root string) (uint64, bool) {
	avail, ok := memAvailable(filepath.Join(root, "proc/meminfo"))
	if !ok {
		return 0, false
	}
	if limit, ok := cgroupRoom(root); ok && limit < avail {
		avail = limit
	}
	return avail, true
}

// memAvailable parses the MemAvailable line (in kB) of a meminfo file.
func memAvailable(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, false
			}
			return kb * 1024, true
		}
	}
	return 0, false
}

// cgroupRoom returns the limit of the process's memory cgroup minus its
// usage, and false if there is no limit or it cannot be read. The cgroup's
// directory is taken from /proc/self/cgroup; inside a container whose
// cgroup namespace hides that path, the mount's root is the cgroup itself.
func cgroupRoom(root string) (uint64, bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, false
	}
	best, found := uint64(0), false
	consider := func(limitFile, usageFile string) {
		limit, ok := readUint(limitFile)
		if !ok || limit >= 1<<62 { // "max", or v1's page-rounded 2^63 - 1: no limit
			return
		}
		usage, _ := readUint(usageFile)
		room := uint64(0)
		if usage < limit {
			room = limit - usage
		}
		if !found || room < best {
			best, found = room, true
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // cgroup v2
			for _, dir := range []string{filepath.Join(root, "sys/fs/cgroup", parts[2]), filepath.Join(root, "sys/fs/cgroup")} {
				consider(filepath.Join(dir, "memory.max"), filepath.Join(dir, "memory.current"))
			}
		case hasController(parts[1], "memory"): // cgroup v1
			for _, dir := range []string{filepath.Join(root, "sys/fs/cgroup/memory", parts[2]), filepath.Join(root, "sys/fs/cgroup/memory")} {
				consider(filepath.Join(dir, "memory.limit_in_bytes"), filepath.Join(dir, "memory.usage_in_bytes"))
			}
		}
	}
	return best, found
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readUint reads a file holding one unsigned integer ("max" is not one).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}
