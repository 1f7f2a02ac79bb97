# embed.awk - a text file as a C string: awk -v name=NAME -f embed.awk FILE
#
# Inlined in a <script> or <style> element, the text must not close it:
# a "</script" or "</style" in it fails the build.
BEGIN { printf "const char %s[] =\n", name }
tolower($0) ~ /<\/(script|style)/ {
	printf "%s:%d: \"</script\" or \"</style\" would end the inline element\n", \
		FILENAME, FNR > "/dev/stderr"
	bad = 1
	exit 1
}
{
	gsub(/\\/, "&&")
	gsub(/"/, "\\\\&")
	gsub(/\t/, "\\t")
	printf "\t\"%s\\n\"\n", $0
}
END {
	if (bad)
		exit 1
	print "\t\"\";"
}
