package telegramtest

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Shown decodes what the user sees: HTML parsed, plain text as it is,
// captions, file names and button texts; a rejected request shows nothing.
func TestShown(t *testing.T) {
	srv := New(t)
	post := func(method, contentType, body string) {
		t.Helper()
		resp, err := http.Post(srv.URL()+"/bot"+srv.Token()+"/"+method, contentType, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post("sendMessage", "application/json", `{"chat_id":1,"text":"sk-ab<b>cd</b>&amp;ef","parse_mode":"HTML","reply_markup":{"inline_keyboard":[[{"text":"Press","callback_data":"x"}]]}}`)
	post("sendMessage", "application/json", `{"chat_id":1,"text":"<b>plain</b>"}`)
	post("sendMessage", "application/json", `{"chat_id":1,"text":"<x>rejected</x>","parse_mode":"HTML"}`)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("chat_id", "1")
	w.WriteField("caption", "a caption")
	fw, _ := w.CreateFormFile("document", "report.txt")
	fw.Write([]byte("content"))
	w.Close()
	post("sendDocument", w.FormDataContentType(), body.String())

	want := []string{"sk-abcd&ef", "Press", "<b>plain</b>", "a caption", "report.txt"}
	if diff := cmp.Diff(want, srv.Shown()); diff != "" {
		t.Errorf("Shown (-want +got):\n%s", diff)
	}
}
