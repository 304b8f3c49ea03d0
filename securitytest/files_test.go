package securitytest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sendFileArgs returns send_file's arguments for path with caption.
func sendFileArgs(path, caption string) string {
	b, err := json.Marshal(map[string]string{"path": path, "caption": caption})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Expectations of the file vectors.
var (
	// expectSentRedacted: send_file sent a text file with its secrets
	// replaced.
	expectSentRedacted = expectation{what: "send_file's note of a redacted document", text: func(secretSet) string { return "secrets replaced with [REDACTED]" }}
	// expectNotSent: send_file refused a binary file that holds a secret.
	expectNotSent = expectation{what: "send_file's refusal of a binary file with a secret", text: func(secretSet) string { return "holds a secret" }}
	// expectProcessEntry: a file tool could not open the bot's own /proc
	// entry: the sandbox's view refuses it, and without the view the
	// kernel does, since the hardened bot's entries belong to root.
	expectProcessEntry = expectation{what: "the refusal of the bot's own /proc entry",
		pattern: regexp.MustCompile(`/proc entry|Permission denied: /proc/`)}
)

// sendFileVectors send files of the secrets directory to the chat: every
// byte the Bot API receives (the upload, its name and caption) is searched.
func sendFileVectors() []vector {
	send := func(name, file string, expect expectation) vector {
		return vector{name: name, family: "send_file", tool: "send_file", expect: []expectation{expect},
			args: func(p vectorPaths) string {
				return sendFileArgs(filepath.Join(p.secrets, file), "the file "+file)
			}}
	}
	return []vector{
		send("send-file-text", "all", expectSentRedacted),
		send("send-file-png-text-chunk", imageText, expectNotSent),
		send("send-file-png-trailing", imageTrailing, expectNotSent),
		send("send-file-jpeg-exif", imageEXIF, expectNotSent),
		send("send-file-fake-png", imageFake, expectNotSent),
		send("send-file-tar", archiveTar, expectNotSent),
		send("send-file-zip-stored", archiveZip, expectNotSent),
		send("send-file-tar-gz", archiveTarGz, expectNotSent),
		send("send-file-zip-deflated", archiveZipDeflated, expectNotSent),
		send("send-file-pdf-flate", documentPDF, expectNotSent),
		send("send-file-png-ztxt", imageZTXt, expectNotSent),
	}
}

// The archives in the secrets directory: every known secret in an entry
// and in an entry's name, stored without compression as tar and zip -0
// store them.
const (
	archiveTar = "secrets.tar"
	archiveZip = "secrets.zip"
)

// The compressed files in the secrets directory: every known secret
// compressed inside, nowhere in the file's own bytes.
const (
	archiveTarGz       = "secrets.tar.gz"
	archiveZipDeflated = "secrets-deflated.zip"
	documentPDF        = "secrets.pdf"
)

// writeSecretArchives writes the archives into the secrets directory.
func (l *layout) writeSecretArchives(t *testing.T, set secretSet) {
	t.Helper()
	var all strings.Builder
	for _, sec := range set.known() {
		all.WriteString(sec.value + "\n")
	}
	name := strings.NewReplacer("/", "_", "\n", "").Replace(set.known()[0].value)
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, e := range []struct{ name, body string }{{"all.txt", all.String()}, {name, "x"}} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o600, Size: int64(len(e.body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for _, e := range []struct{ name, body string }{{"all.txt", all.String()}, {name, "x"}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeBotFile(t, l, filepath.Join(l.secretsDir, archiveTar), tb.String())
	writeBotFile(t, l, filepath.Join(l.secretsDir, archiveZip), zb.String())

	// Compressed content that compression really encodes: a short run of
	// high-entropy secrets alone may be kept as a stored block, raw.
	filler := strings.Repeat("# settings of the service, as the archive keeps them\nname=value\n", 40)
	content := filler + all.String() + filler
	var ctb bytes.Buffer
	ctw := tar.NewWriter(&ctb)
	if err := ctw.WriteHeader(&tar.Header{Name: "all.txt", Mode: 0o600, Size: int64(len(content))}); err != nil {
		t.Fatal(err)
	}
	ctw.Write([]byte(content))
	ctw.Close()
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(ctb.Bytes())
	gw.Close()
	var dz bytes.Buffer
	dw := zip.NewWriter(&dz)
	w, err := dw.CreateHeader(&zip.FileHeader{Name: "all.txt", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(content))
	dw.Close()
	flate := zlibBytes([]byte(content))
	pdf := fmt.Sprintf("%%PDF-1.7\n1 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\ntrailer\n<< >>\n%%%%EOF\n", len(flate), flate)
	writeBotFile(t, l, filepath.Join(l.secretsDir, archiveTarGz), gz.String())
	writeBotFile(t, l, filepath.Join(l.secretsDir, archiveZipDeflated), dz.String())
	writeBotFile(t, l, filepath.Join(l.secretsDir, documentPDF), pdf)
}

// zlibBytes returns data compressed with zlib, as PDF streams and PNG
// zTXt chunks hold it.
func zlibBytes(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// processEntryVectors point the in-process file tools (read, send_file) at
// the bot's own /proc entries, which the bot itself may always read
// whatever its hardening: a child's /proc/self is its own, but a file tool
// runs in the bot.
func processEntryVectors() []vector {
	file := func(name, tool, path string) vector {
		return vector{name: name, family: "proc-self", tool: tool, expect: []expectation{expectProcessEntry},
			args: func(vectorPaths) string {
				if tool == "send_file" {
					return sendFileArgs(path, "")
				}
				return pathArgs(path)
			}}
	}
	return []vector{
		file("read-proc-self-environ", "read", "/proc/self/environ"),
		file("read-proc-thread-self-environ", "read", "/proc/thread-self/environ"),
		file("read-proc-self-mem", "read", "/proc/self/mem"),
		file("send-file-proc-self-environ", "send_file", "/proc/self/environ"),
	}
}

// TestSecurityUnconfinedFileTools runs the /proc/self vectors with the
// agent sandbox off (AGENT_SANDBOX=off, as on a kernel without Landlock in
// auto mode): the file tools then open paths as the bot's user, and the
// bot's own /proc entries hold every secret of the deployment, those that
// are only deny-listed (DB_PASSWORD) included. The host
// hardening alone must keep them closed: a non-dumpable process's entries
// belong to root, to the process itself too.
func TestSecurityUnconfinedFileTools(t *testing.T) {
	rows := runSuite(t, processEntryVectors(), []string{"AGENT_SANDBOX=off"})
	t.Logf("results:\n%s", formatTable(rows))
	for _, r := range rows {
		t.Run(r.vector+"/"+r.channel, func(t *testing.T) {
			switch r.outcome {
			case outcomeSkip:
				t.Skip(strings.Join(r.details, "; "))
			case outcomeLeak:
				t.Errorf("LEAK with the sandbox off: %s", strings.Join(r.details, "; "))
			case outcomeFail:
				t.Errorf("FAIL with the sandbox off: %s", strings.Join(r.details, "; "))
			}
		})
	}
}

// homeCredentials is the file in the bot's home that holds DB_PASSWORD, as
// a .pgpass does: outside the sandbox's view. The redactor knows the
// deny-listed value too, so the exercise row (the read refused) is what
// tells a sandbox that let the agent read it.
const homeCredentials = ".pgpass"

// writeHomeCredentials writes homeCredentials into the bot's home.
func (l *layout) writeHomeCredentials(t *testing.T, set secretSet) {
	t.Helper()
	writeBotFile(t, l, filepath.Join(l.home, homeCredentials), "db:5432:app:app:"+set.byName(envDBPassword).value+"\n")
}

// instructionLinkVectors make the workspace's AGENTS.md, which the bot
// itself reads into every system prompt, a link to a file the sandbox
// hides from the agent.
func instructionLinkVectors() []vector {
	link := func(name, target string) vector {
		return bashVector("state", name, func(p vectorPaths) string {
			return fmt.Sprintf("ln -sfn %q %q && ls -l %q", filepath.Join(p.home, homeCredentials), filepath.Join(p.workspace, "AGENTS.md"), filepath.Join(p.workspace, "AGENTS.md"))
		}, expectation{what: "the link", text: func(secretSet) string { return "AGENTS.md -> " }})
	}
	hardlink := bashVector("state", "hardlink-home-credentials", func(p vectorPaths) string {
		return fmt.Sprintf("ln %q %q; echo \"ln status $?\"; cat %q 2>&1 | head -c 200; true",
			filepath.Join(p.home, homeCredentials), filepath.Join(p.workspace, "pgpass-hardlink"), filepath.Join(p.workspace, "pgpass-hardlink"))
	}, expectation{what: "the refused link", text: func(secretSet) string { return "ln status 1" }})
	return []vector{link("agents-md-link-home", homeCredentials), hardlink}
}
