package markdown

const (
	needsPreviews = "needs server-side inline image/video previews (camo-proxied message_inline_image)"
	needsKaTeX    = "needs KaTeX: without a RenderTeX hook math renders as the reference's tex-error fallback"
)

// knownDifferences are the corpus cases this package does not render as
// the reference does, with the reason. TestReferenceCorpus fails if one of
// them starts to match, so the list stays exact.
var knownDifferences = map[string]string{
	"inline_image":                   needsPreviews,
	"two_inline_images":              needsPreviews,
	"deduplicate_inline_previews":    needsPreviews,
	"bulleted_list_inlining":         needsPreviews,
	"only_inline_image":              needsPreviews,
	"only_named_inline_image":        needsPreviews,
	"only_inline_video":              needsPreviews,
	"only_named_inline_video":        needsPreviews,
	"spoiler_with_inline_image":      needsPreviews,
	"fenced_quotes_inside_mathblock": needsKaTeX,
	"tex_inline":                     needsKaTeX,
	"tex_complex":                    needsKaTeX,
	"tex_fenced_math":                needsKaTeX,
	"tex_money":                      needsKaTeX,
	"tex_inline_permissive_spacing":  needsKaTeX,
	"tex_safe_script_tag":            needsKaTeX,
	"tex_inline_no_markdown_inside":  needsKaTeX,
	"tex_display_no_markdown_inside": needsKaTeX,
}
