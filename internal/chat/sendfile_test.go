package chat

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// pngFile is a PNG signature and IHDR chunk: what the photo check looks at.
const pngFile = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"

// sendFileCall is the model's send_file call with args.
func sendFileCall(t *testing.T, args map[string]any) agenttest.FauxResponse {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return agenttest.FauxToolCalls(agenttest.FauxCall("send_file", string(raw)))
}

// TestSendFile sends files through the real host and the fake Bot API.
func TestSendFile(t *testing.T) {
	workspace := t.TempDir()
	files := map[string]string{
		"chart.png": pngFile,
		"notes.txt": "the key is " + openAIKey + "\n",
		"dump.bin":  "\x00\x01" + base64.StdEncoding.EncodeToString([]byte(openAIKey)) + "\x00",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(workspace, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(outside, []byte(`{"secret": "state"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(workspace, "big.iso")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 51<<20); err != nil { // sparse: 51 MB, nothing written
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       map[string]any
		wantMethod string // "" when nothing may be sent
		wantFile   string
		wantData   string
		wantResult string
	}{
		{"photo", map[string]any{"path": "chart.png", "caption": "the chart"}, "sendPhoto", "chart.png", pngFile, "Sent photo chart.png"},
		{"image as document", map[string]any{"path": "chart.png", "as_photo": false}, "sendDocument", "chart.png", pngFile, "Sent document chart.png"},
		{"text redacted", map[string]any{"path": "notes.txt", "caption": "key " + openAIKey}, "sendDocument", "notes.txt", "the key is [REDACTED]\n", "secrets replaced with [REDACTED]"},
		{"binary with a secret", map[string]any{"path": "dump.bin"}, "", "", "", "dump.bin is a binary file that holds a secret"},
		{"51 MB", map[string]any{"path": "big.iso"}, "", "", "", "larger than the 50 MB the Telegram Bot API accepts"},
		{"outside the view", map[string]any{"path": outside}, "", "", "", "Outside the sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := agenttest.NewFauxProvider(sendFileCall(t, tt.args), agenttest.FauxText("sent it"))
			h := approvalHarness(t, harnessConfig{provider: faux, workspace: workspace})
			h.tg.SendText(userID, userID, "send it")
			h.waitText(userID, "sent it")
			var uploads []telegramtest.Message
			for _, m := range h.tg.Messages(userID) {
				if m.File != nil {
					uploads = append(uploads, m)
				}
			}
			if got := lastToolResult(t, faux); !strings.Contains(got, tt.wantResult) {
				t.Errorf("tool result %q does not contain %q", got, tt.wantResult)
			}
			if tt.wantMethod == "" {
				if len(uploads) != 0 {
					t.Errorf("%d file(s) went out, want none", len(uploads))
				}
				return
			}
			if len(uploads) != 1 {
				t.Fatalf("%d file(s) went out, want 1", len(uploads))
			}
			m := uploads[0]
			if m.Method != tt.wantMethod || m.File.Filename != tt.wantFile || string(m.File.Content) != tt.wantData {
				t.Errorf("sent %s %q (%d bytes), want %s %q (%d bytes)", m.Method, m.File.Filename, len(m.File.Content), tt.wantMethod, tt.wantFile, len(tt.wantData))
			}
			if strings.Contains(m.Text, openAIKey) {
				t.Error("the secret leaked into the caption")
			}
			if c, ok := tt.args["caption"].(string); ok && !strings.Contains(m.Visible, strings.ReplaceAll(c, openAIKey, "[REDACTED]")) {
				t.Errorf("caption %q, want the redacted %q", m.Visible, "[REDACTED]")
			}
		})
	}
	data, err := os.ReadFile(filepath.Join(workspace, "notes.txt"))
	if err != nil || !strings.Contains(string(data), openAIKey) {
		t.Errorf("send_file changed the file it redacted (read error %v)", err)
	}
}

// TestSendFilePhotoRefused checks that a photo Telegram refuses goes as a
// document, and that an upload failure is reported to the model.
func TestSendFilePhotoRefused(t *testing.T) {
	workspace := t.TempDir()
	if err := os.WriteFile(filepath.Join(workspace, "wide.png"), []byte(pngFile), 0o644); err != nil {
		t.Fatal(err)
	}
	faux := agenttest.NewFauxProvider(
		sendFileCall(t, map[string]any{"path": "wide.png"}), agenttest.FauxText("first"),
		sendFileCall(t, map[string]any{"path": "wide.png"}), agenttest.FauxText("second"),
	)
	h := approvalHarness(t, harnessConfig{provider: faux, workspace: workspace})
	h.tg.FailNext("sendPhoto", 1, 400, "Bad Request: PHOTO_INVALID_DIMENSIONS", 0)
	h.tg.SendText(userID, userID, "send it")
	h.waitText(userID, "first")
	if got := lastToolResult(t, faux); !strings.HasPrefix(got, "Sent document wide.png") {
		t.Errorf("tool result %q, want the photo sent as a document", got)
	}
	h.tg.FailNext("sendPhoto", 1, 400, "Bad Request: PHOTO_INVALID_DIMENSIONS", 0)
	h.tg.FailNext("sendDocument", 1, 400, "Bad Request: wrong file identifier", 0)
	h.tg.SendText(userID, userID, "again")
	h.waitText(userID, "second")
	if got := lastToolResult(t, faux); !strings.Contains(got, "Not sent: wide.png could not be delivered to the chat") || !strings.Contains(got, "wrong file identifier") {
		t.Errorf("tool result %q does not report the failure plainly", got)
	}
}

// TestSendFileFromScheduledJob checks that a job's turn may send files.
func TestSendFileFromScheduledJob(t *testing.T) {
	workspace := t.TempDir()
	if err := os.WriteFile(filepath.Join(workspace, "report.txt"), []byte("all fine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	faux := agenttest.NewFauxProvider(sendFileCall(t, map[string]any{"path": "report.txt", "caption": "daily report"}), agenttest.FauxText("report sent"))
	h := approvalHarness(t, harnessConfig{provider: faux, workspace: workspace})
	if err := h.host.Prompt(t.Context(), "1001", "⏰ Job report", "send the report"); err != nil {
		t.Fatal(err)
	}
	h.waitText(userID, "report sent")
	m := h.waitText(userID, "daily report")
	if m.File == nil || string(m.File.Content) != "all fine\n" {
		t.Errorf("the job's file did not arrive: %+v", m)
	}
}

// An upload that meets a 5xx or a 429 is retried like every other send.
func TestSendFileRetried(t *testing.T) {
	workspace := t.TempDir()
	if err := os.WriteFile(filepath.Join(workspace, "report.txt"), []byte("all fine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	faux := agenttest.NewFauxProvider(sendFileCall(t, map[string]any{"path": "report.txt"}), agenttest.FauxText("sent"))
	h := approvalHarness(t, harnessConfig{provider: faux, workspace: workspace})
	h.tg.FailNext("sendDocument", 1, 502, "Bad Gateway", 0)
	h.tg.FailNext("sendDocument", 1, 429, "", 1)
	h.tg.SendText(userID, userID, "send it")
	h.waitText(userID, "sent")
	if got := lastToolResult(t, faux); !strings.HasPrefix(got, "Sent document report.txt") {
		t.Errorf("tool result %q, want the document sent after the retries", got)
	}
	if n := len(h.tg.RequestsFor("sendDocument")); n != 3 {
		t.Errorf("sendDocument tried %d times, want 3 (a 502, a 429, then the upload)", n)
	}
}

// TestSendFileContentTypes checks that send_file's uploads carry the
// media type of their content and name, not application/octet-stream.
func TestSendFileContentTypes(t *testing.T) {
	workspace := t.TempDir()
	files := map[string]string{
		"report.csv":  "month,total\njan,10\n",
		"chart.png":   pngFile,
		"invoice.pdf": "%PDF-1.7\n1 0 obj\n<<>>\nendobj\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(workspace, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"report.csv":  "text/csv; charset=utf-8",
		"chart.png":   "image/png",
		"invoice.pdf": "application/pdf",
	}
	var script []agenttest.FauxResponse
	for _, name := range []string{"report.csv", "chart.png", "invoice.pdf"} {
		script = append(script, sendFileCall(t, map[string]any{"path": name, "as_photo": false}))
	}
	faux := agenttest.NewFauxProvider(append(script, agenttest.FauxText("sent them"))...)
	h := approvalHarness(t, harnessConfig{provider: faux, workspace: workspace})
	h.tg.SendText(userID, userID, "send them")
	h.waitText(userID, "sent them")
	got := map[string]string{}
	for _, m := range h.tg.Messages(userID) {
		if m.File != nil {
			got[m.File.Filename] = m.File.ContentType
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("uploads' content types (-want +got):\n%s", diff)
	}
}
