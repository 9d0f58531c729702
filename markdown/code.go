package markdown

import (
	"regexp"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// Code blocks come out as the reference's Pygments-highlighted blocks:
//
//	<div class="codehilite" data-code-language="Python"><pre><span></span><code>…
//	</code></pre></div>
//
// The tokens come from chroma's lexers and carry Pygments' short CSS class
// names, which chroma shares.

// pygmentsNames are the reference's (Pygments') names for languages where
// they differ from chroma's, keyed by chroma's name or by the alias typed.
var pygmentsNames = map[string]string{
	"Python 2":       "Python 2.x",
	"css+php":        "CSS+PHP",
	"html+php":       "HTML+PHP",
	"javascript+php": "JavaScript+PHP",
	"js+php":         "JavaScript+PHP",
	"xml+php":        "XML+PHP",
	"latex":          "TeX",
	"bash":           "Bash",
	"sh":             "Bash",
	"shell":          "Bash",
	"Go":             "Go",
	"plaintext":      "Text only",
	"text":           "Text only",
}

// phpFamily are aliases lexed as PHP without a leading "<?php", as the
// reference asks Pygments to do (startinline).
var phpFamily = map[string]bool{"css+php": true, "html+php": true, "javascript+php": true, "js+php": true, "xml+php": true}

var shebangRE = regexp.MustCompile(`^(?:(?:::+)|(#!))((?:/\w+)*[/ ])?([\w#.+-]*)`)

func lexerFor(lang string) chroma.Lexer {
	if phpFamily[lang] {
		lang = "php"
	}
	l := lexers.Get(lang)
	if l == nil {
		return nil
	}
	if l.Config().Name == "plaintext" {
		return nil
	}
	return l
}

// languageName is the data-code-language value for a fence's language.
func languageName(lang string) string {
	if n, ok := pygmentsNames[lang]; ok {
		return n
	}
	l := lexerFor(lang)
	if l == nil {
		return lang
	}
	name := l.Config().Name
	if n, ok := pygmentsNames[name]; ok {
		return n
	}
	return name
}

// formatCode renders a code block; lang is the fence's language (lower
// case) or empty.
func (r *renderer) formatCode(lang, text string) string {
	src := strings.Trim(text, "\n")
	hlLang := lang
	if lang == "" {
		first, _, _ := strings.Cut(src, "\n")
		if m := shebangRE.FindStringSubmatch(first); m != nil && (m[1] != "" || strings.HasPrefix(first, "::")) {
			hlLang = strings.ToLower(m[3])
		}
	}
	// With a language, the reference re-serializes the block, which
	// leaves quotes unescaped in text.
	esc := escapeCode
	if lang != "" {
		esc = escapeText
	}
	var b strings.Builder
	b.WriteString(`<div class="codehilite"`)
	if lang != "" {
		b.WriteString(` data-code-language="` + escapeAttr(languageName(lang)) + `"`)
	}
	b.WriteString(`><pre><span></span><code>`)
	b.WriteString(highlight(hlLang, src+"\n", esc))
	b.WriteString("</code></pre></div>")
	return b.String()
}

func escapeCode(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}

// highlight returns src as HTML spans with Pygments' classes, merging
// neighbouring tokens of one class and closing spans at line ends.
func highlight(lang, src string, esc func(string) string) (out string) {
	lexer := lexerFor(lang)
	if lang == "" || lexer == nil {
		return esc(src)
	}
	defer func() {
		if recover() != nil {
			out = esc(src)
		}
	}()
	it, err := lexer.Tokenise(&chroma.TokeniseOptions{State: "root", EnsureLF: true}, src)
	if err != nil {
		return esc(src)
	}
	var b strings.Builder
	curClass, cur := "", ""
	flush := func() {
		if cur == "" {
			return
		}
		if curClass == "" {
			b.WriteString(esc(cur))
		} else {
			b.WriteString(`<span class="` + curClass + `">` + esc(cur) + `</span>`)
		}
		cur = ""
	}
	pythonic := strings.HasPrefix(lexer.Config().Name, "Python")
	prev := chroma.Token{}
	for tok := it(); tok != chroma.EOF; tok = it() {
		class := tokenClass(tok.Type)
		if pythonic && class == "" && strings.TrimSpace(tok.Value) == "" && prev.Type.InCategory(chroma.Keyword) {
			switch prev.Value {
			case "def", "class", "from", "import":
				// Pygments marks the space after these as whitespace.
				class = "w"
			}
		}
		prev = tok
		parts := strings.Split(tok.Value, "\n")
		for i, part := range parts {
			if i > 0 {
				flush()
				b.WriteString("\n")
			}
			if part == "" {
				continue
			}
			if class != curClass {
				flush()
				curClass = class
			}
			cur += part
		}
	}
	flush()
	return b.String()
}

// tokenClass is the Pygments CSS class of a token type: its own short
// name, or its nearest ancestor's.
func tokenClass(t chroma.TokenType) string {
	for {
		if t == chroma.Text || t == chroma.None || t == chroma.Other {
			return ""
		}
		if c, ok := chroma.StandardTypes[t]; ok {
			return c
		}
		switch {
		case t.SubCategory() != t:
			t = t.SubCategory()
		case t.Category() != t:
			t = t.Category()
		default:
			return ""
		}
	}
}
