package telegramtest

import "strings"

// builtinFunc answers a method from the server's state; it is called with
// the server's lock held.
type builtinFunc func(s *Server, r *Request) (any, *APIError)

// builtin returns the canonical name and the handler of a method the server
// implements, given its name in lower case; ok is false for any other.
func builtin(lower string) (name string, h builtinFunc, ok bool) {
	switch lower {
	case "getme":
		return "getMe", getMe, true
	case "getupdates":
		return "getUpdates", nil, true
	case "sendmessage":
		return "sendMessage", sendMessage, true
	case "editmessagetext":
		return "editMessageText", editMessageText, true
	case "editmessagereplymarkup":
		return "editMessageReplyMarkup", editMessageReplyMarkup, true
	case "sendmessagedraft":
		return "sendMessageDraft", sendMessageDraft, true
	case "sendchataction":
		return "sendChatAction", sendChatAction, true
	case "setmycommands":
		return "setMyCommands", setMyCommands, true
	case "deletemycommands":
		return "deleteMyCommands", deleteMyCommands, true
	case "getmycommands":
		return "getMyCommands", getMyCommands, true
	case "answercallbackquery":
		return "answerCallbackQuery", answerCallbackQuery, true
	case "getfile":
		return "getFile", getFile, true
	case "senddocument":
		return "sendDocument", sendMedia("document"), true
	case "sendphoto":
		return "sendPhoto", sendMedia("photo"), true
	case "deletemessage":
		return "deleteMessage", deleteMessage, true
	case "deletewebhook":
		return "deleteWebhook", deleteWebhook, true
	case "setwebhook":
		return "setWebhook", setWebhook, true
	case "getwebhookinfo":
		return "getWebhookInfo", getWebhookInfo, true
	case "setmessagereaction":
		return "setMessageReaction", alwaysTrue, true
	}
	return "", nil, false
}

// canonicalMethod returns the server's spelling of a method name, which
// Telegram matches case-insensitively; unknown names are returned as given.
func canonicalMethod(method string) string {
	if name, _, ok := builtin(strings.ToLower(method)); ok {
		return name
	}
	return method
}
