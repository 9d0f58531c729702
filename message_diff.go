package chat

import (
	"regexp"
	"strings"
)

// htmlDiff highlights how rendered content changed, for the edit
// history's content_html_diff: the new HTML, with inserted words wrapped
// in <span class="highlight_text_inserted"> and deleted words in
// <span class="highlight_text_deleted">, as the reference's
// highlight_html_differences shows them. Tags are kept as they are; only
// text is compared, word by word.
func htmlDiff(before, after string) string {
	a, b := diffTokens(before), diffTokens(after)
	if len(a)*len(b) > maxDiffCells {
		return after // too large to compare: shown whole
	}
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	var ins, del strings.Builder
	flush := func() {
		if del.Len() > 0 {
			out.WriteString(`<span class="highlight_text_deleted">` + del.String() + `</span>`)
			del.Reset()
		}
		if ins.Len() > 0 {
			out.WriteString(`<span class="highlight_text_inserted">` + ins.String() + `</span>`)
			ins.Reset()
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			flush()
			out.WriteString(b[j])
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			if isTag(b[j]) {
				flush()
				out.WriteString(b[j])
			} else {
				ins.WriteString(b[j])
			}
			j++
		default:
			if !isTag(a[i]) {
				del.WriteString(a[i])
			}
			i++
		}
	}
	flush()
	return out.String()
}

// maxDiffCells bounds the comparison's table.
const maxDiffCells = 4_000_000

var diffTokenRE = regexp.MustCompile(`<[^>]*>|\s+|[^<\s]+`)

func diffTokens(html string) []string { return diffTokenRE.FindAllString(html, -1) }

func isTag(tok string) bool { return strings.HasPrefix(tok, "<") }
