# doc/man-escape.awk - the Markdown of a manual page as lowdown must read
# it: an underscore between two letters or digits outside code (model_path,
# CLOCK_MONOTONIC, allowed_signers) is escaped, so that lowdown does not
# take a pair of them for emphasis and drop both. Code blocks (fenced, or
# indented after a blank line) and code spans are left as they are; an
# underscore that opens or closes emphasis (_YYYYMMDD_) has a letter on
# one side only and is left too.
function escape(s,    out) {
	out = ""
	while (match(s, /[A-Za-z0-9]_[A-Za-z0-9]/)) {
		out = out substr(s, 1, RSTART) "\\_"
		s = substr(s, RSTART + 2)
	}
	return out s
}
BEGIN { code = 0; fenced = 0; blank = 1 }
/^```/ { fenced = !fenced; print; blank = 0; next }
fenced { print; next }
{
	if ($0 ~ /^(    |\t)/ && (blank || code))
		code = 1
	else if ($0 !~ /^[ \t]*$/)
		code = 0
	blank = ($0 ~ /^[ \t]*$/)
	if (code) {
		print
		next
	}
	# code spans: the odd fields between backticks
	n = split($0, part, "`")
	line = ""
	for (i = 1; i <= n; i++)
		line = line (i > 1 ? "`" : "") (i % 2 ? escape(part[i]) : part[i])
	print line
}
