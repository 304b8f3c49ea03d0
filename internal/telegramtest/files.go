package telegramtest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-telegram/bot/models"
)

type storedFile struct {
	file    models.File
	content []byte
}

// AddFile registers a file that getFile describes and that is downloadable at
// <URL>/file/bot<token>/<path>.
func (s *Server) AddFile(fileID, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addFileLocked(fileID, path, content)
}

func (s *Server) addFileLocked(fileID, path string, content []byte) models.File {
	file := models.File{FileID: fileID, FileUniqueID: "unique-" + fileID, FileSize: int64(len(content)), FilePath: path}
	s.files[fileID] = storedFile{file: file, content: append([]byte(nil), content...)}
	s.filePaths[path] = fileID
	return file
}

// addGeneratedFile registers content under a fresh file id and a path made
// from pathFormat and a counter.
func (s *Server) addGeneratedFile(kind, pathFormat string, content []byte) models.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFileID++
	return s.addFileLocked(fmt.Sprintf("%s-%d", kind, s.nextFileID), fmt.Sprintf(pathFormat, s.nextFileID), content)
}

// getFile answers getFile for a registered file id.
func getFile(s *Server, r *Request) (any, *APIError) {
	stored, ok := s.files[r.Params["file_id"]]
	if !ok {
		return nil, badRequest("invalid file_id")
	}
	return stored.file, nil
}

// serveFile answers a download of a registered file; rest is
// "<token>/<path>".
func (s *Server) serveFile(w http.ResponseWriter, hr *http.Request, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	req, _ := parseRequest(hr)
	req.Method = FileDownload
	req.Token = token
	req.Params["file_path"] = path
	s.mu.Lock()
	fileID, found := s.filePaths[path]
	stored := s.files[fileID]
	var apiErr *APIError
	switch {
	case token != s.cfg.token:
		apiErr = &APIError{Code: http.StatusUnauthorized, Description: "Unauthorized"}
	case !found:
		apiErr = notFound()
	default:
		apiErr = s.takeFailureLocked(FileDownload)
	}
	s.recordLocked(&req, apiErr)
	s.mu.Unlock()
	if apiErr != nil {
		http.Error(w, apiErr.Description, apiErr.Code)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(stored.content)
}
