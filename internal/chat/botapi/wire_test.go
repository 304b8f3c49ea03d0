package botapi_test

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// TestDecodeUpdateHoldsWhatTheBotReads decodes updates whose every field
// is one the bot reads both ways, with DecodeUpdate and straight into
// models.Update: each must come out the same, so no field the bot reads
// is lost on the way.
func TestDecodeUpdateHoldsWhatTheBotReads(t *testing.T) {
	tests := []struct {
		name, raw string
	}{
		{"text with entities", `{"update_id":7,"message":{"message_id":3,"message_thread_id":5,"is_topic_message":true,
			"from":{"id":42,"is_bot":false,"first_name":"Ada","username":"ada"},"date":1700000000,
			"chat":{"id":-100,"type":"supergroup","title":"T","is_forum":true},
			"text":"@bot hi","entities":[{"type":"mention","offset":0,"length":4},
			{"type":"text_mention","offset":5,"length":2,"user":{"id":9,"is_bot":true,"first_name":"B"}}]}}`},
		{"edited reply", `{"update_id":8,"edited_message":{"message_id":4,"date":1,"edit_date":2,
			"chat":{"id":1,"type":"private"},"from":{"id":1,"first_name":"A"},"text":"x",
			"reply_to_message":{"message_id":2,"date":1,"chat":{"id":1,"type":"private"},"from":{"id":9,"is_bot":true,"first_name":"B"},"text":"y"}}}`},
		{"attachments", `{"update_id":9,"message":{"message_id":5,"date":1,"chat":{"id":1,"type":"private"},
			"caption":"see","caption_entities":[{"type":"bold","offset":0,"length":3}],
			"photo":[{"file_id":"p","file_unique_id":"u","width":90,"height":90,"file_size":100}],
			"voice":{"file_id":"v","file_unique_id":"w","duration":3,"mime_type":"audio/ogg"},
			"audio":{"file_id":"a","file_unique_id":"b","duration":4},
			"document":{"file_id":"d","file_unique_id":"e","file_name":"f.txt","mime_type":"text/plain"}}}`},
		{"kinds the bot names", `{"update_id":10,"message":{"message_id":6,"date":1,"chat":{"id":1,"type":"private"},
			"animation":{"file_id":"g","file_unique_id":"h","width":1,"height":1,"duration":1},
			"video":{"file_id":"i","file_unique_id":"j","width":1,"height":1,"duration":1},
			"video_note":{"file_id":"k","file_unique_id":"l","length":1,"duration":1},
			"sticker":{"file_id":"m","file_unique_id":"n","type":"regular","width":1,"height":1,"is_animated":false,"is_video":false},
			"contact":{"phone_number":"1","first_name":"C"},"location":{"latitude":1.5,"longitude":2.5},
			"venue":{"location":{"latitude":1,"longitude":2},"title":"V","address":"A"},
			"poll":{"id":"q","question":"?","options":[{"text":"a","voter_count":1}],"total_voter_count":1,"is_closed":false,"is_anonymous":true,"type":"regular","allows_multiple_answers":false}}}`},
		{"button press", `{"update_id":11,"callback_query":{"id":"c","from":{"id":42,"first_name":"Ada"},"chat_instance":"ci","data":"stop:1",
			"message":{"message_id":12,"date":1,"chat":{"id":42,"type":"private"},"text":"working"}}}`},
		{"button press on a message gone", `{"update_id":12,"callback_query":{"id":"d","from":{"id":42,"first_name":"Ada"},"data":"x",
			"message":{"message_id":13,"date":0,"chat":{"id":42,"type":"private"}}}}`},
		{"another kind", `{"update_id":13}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want models.Update
			if err := json.Unmarshal([]byte(tt.raw), &want); err != nil {
				t.Fatal(err)
			}
			got, err := botapi.DecodeUpdate([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("DecodeUpdate differs from models.Update (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeUpdateRefusesWhatModelsRefuses: an update that does not parse
// is an error, as it was.
func TestDecodeUpdateRefusesWhatModelsRefuses(t *testing.T) {
	for _, raw := range []string{`{`, `{"update_id":"x"}`, `{"message":{"chat":{"id":"x"}}}`, `{"callback_query":{"message":{"date":"x"}}}`} {
		var m models.Update
		if json.Unmarshal([]byte(raw), &m) == nil {
			t.Fatalf("models.Update takes %s", raw)
		}
		if _, err := botapi.DecodeUpdate([]byte(raw)); err == nil {
			t.Errorf("DecodeUpdate(%s) = nil error, want one", raw)
		}
	}
}
