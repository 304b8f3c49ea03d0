package asusertest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// StatusField returns the field name of /proc/<pid>/status (Uid, CapEff,
// NoNewPrivs...), its blanks made one space: what a test asks of a process
// it started as another user.
func StatusField(pid int, name string) (string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.Join(strings.Fields(v), " "), nil
		}
	}
	return "", fmt.Errorf("asusertest: no %s in the status of process %d", name, pid)
}
