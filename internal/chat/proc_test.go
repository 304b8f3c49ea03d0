package chat

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"
)

// groupAlive reports whether a live (not zombie) process is in group pgid.
func groupAlive(pgid int) bool {
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			return true
		}
	}
	return false
}

// processAlive reports whether pid is a live (not zombie) process.
func processAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z"
}

func modelsChat(id int64, forum bool) models.Chat {
	return models.Chat{ID: id, Type: models.ChatTypeSupergroup, Title: "group", IsForum: forum}
}
