package main

// alias maps a code abbreviation (a token the tokenizer emits) to the
// GloVe words it stands for; its row is their normalised mean.
type alias struct {
	from string
	to   []string
}

// stopTokens are Go keywords and tokens present in nearly every chunk's
// embedding text: they get the -stopweight weight.
var stopTokens = []string{"func", "return", "nil", "err", "go", "var", "const", "package", "struct", "ok"}

// aliases: abbreviations common in identifiers, written from general
// programming usage (not from any evaluation query).
var aliases = []alias{
	{"str", []string{"string"}}, {"strs", []string{"strings"}}, {"buf", []string{"buffer"}},
	{"bufio", []string{"buffered", "input", "output"}}, {"len", []string{"length"}},
	{"fmt", []string{"format"}}, {"conv", []string{"convert"}}, {"strconv", []string{"string", "convert"}},
	{"int", []string{"integer"}}, {"uint", []string{"unsigned", "integer"}}, {"dir", []string{"directory"}},
	{"ctx", []string{"context"}}, {"msg", []string{"message"}}, {"num", []string{"number"}},
	{"addr", []string{"address"}}, {"src", []string{"source"}}, {"dst", []string{"destination"}},
	{"rd", []string{"read"}}, {"wr", []string{"write"}}, {"idx", []string{"index"}},
	{"ptr", []string{"pointer"}}, {"val", []string{"value"}}, {"vals", []string{"values"}},
	{"fn", []string{"function"}}, {"args", []string{"arguments"}}, {"arg", []string{"argument"}},
	{"params", []string{"parameters"}}, {"param", []string{"parameter"}}, {"cfg", []string{"configuration"}},
	{"config", []string{"configuration"}}, {"init", []string{"initialize"}}, {"alloc", []string{"allocate"}},
	{"calc", []string{"calculate"}}, {"cmp", []string{"compare"}}, {"eq", []string{"equal"}},
	{"abs", []string{"absolute"}}, {"sqrt", []string{"square", "root"}}, {"exp", []string{"exponential"}},
	{"pow", []string{"power"}}, {"inf", []string{"infinity"}}, {"utf", []string{"unicode", "encoding"}},
	{"rune", []string{"character"}}, {"runes", []string{"characters"}}, {"bool", []string{"boolean"}},
	{"elem", []string{"element"}}, {"elems", []string{"elements"}}, {"sep", []string{"separator"}},
	{"dup", []string{"duplicate"}}, {"del", []string{"delete"}}, {"rm", []string{"remove"}},
	{"mkdir", []string{"create", "directory"}}, {"tmp", []string{"temporary"}}, {"temp", []string{"temporary"}},
	{"io", []string{"input", "output"}}, {"ioutil", []string{"input", "output"}}, {"db", []string{"database"}},
	{"hex", []string{"hexadecimal"}}, {"regexp", []string{"regular", "expression"}}, {"regex", []string{"regular", "expression"}},
	{"syscall", []string{"system", "call"}}, {"sys", []string{"system"}}, {"proc", []string{"process"}},
	{"exec", []string{"execute"}}, {"env", []string{"environment"}}, {"sig", []string{"signal"}},
	{"mu", []string{"lock"}}, {"mutex", []string{"lock"}}, {"goroutine", []string{"thread"}},
	{"chan", []string{"channel"}}, {"sched", []string{"schedule"}}, {"mem", []string{"memory"}},
	{"pkg", []string{"package"}}, {"lib", []string{"library"}}, {"impl", []string{"implementation"}},
	{"iface", []string{"interface"}}, {"attr", []string{"attribute"}}, {"attrs", []string{"attributes"}},
	{"tok", []string{"token"}}, {"expr", []string{"expression"}}, {"stmt", []string{"statement"}},
	{"decl", []string{"declaration"}}, {"ident", []string{"identifier"}}, {"typ", []string{"type"}},
	{"obj", []string{"object"}}, {"enc", []string{"encode"}}, {"dec", []string{"decode"}},
	{"marshal", []string{"encode", "serialize"}}, {"unmarshal", []string{"decode", "parse"}},
	{"cap", []string{"capacity"}}, {"desc", []string{"description"}}, {"info", []string{"information"}},
	{"auth", []string{"authentication"}}, {"cert", []string{"certificate"}}, {"priv", []string{"private"}},
	{"rand", []string{"random"}}, {"seq", []string{"sequence"}}, {"iter", []string{"iterate"}},
	{"cnt", []string{"count"}}, {"req", []string{"request"}}, {"resp", []string{"response"}},
	{"hdr", []string{"header"}}, {"pos", []string{"position"}}, {"loc", []string{"location"}},
	{"dur", []string{"duration"}}, {"tz", []string{"timezone"}}, {"nl", []string{"newline"}},
	{"eof", []string{"end", "file"}}, {"cwd", []string{"current", "directory"}}, {"ext", []string{"extension"}},
	{"rel", []string{"relative"}}, {"prev", []string{"previous"}}, {"cur", []string{"current"}},
	{"op", []string{"operation"}}, {"ops", []string{"operations"}}, {"lhs", []string{"left"}}, {"rhs", []string{"right"}},
	{"cmd", []string{"command"}}, {"opts", []string{"options"}}, {"opt", []string{"option"}},
	{"stdin", []string{"standard", "input"}}, {"stdout", []string{"standard", "output"}}, {"stderr", []string{"standard", "error"}},
	{"println", []string{"print", "line"}}, {"printf", []string{"print", "format"}}, {"sprintf", []string{"format", "string"}},
	{"atoi", []string{"string", "integer", "convert"}}, {"itoa", []string{"integer", "string", "convert"}},
	{"unquote", []string{"remove", "quotes"}}, {"trim", []string{"remove", "strip"}}, {"cmpl", []string{"complex"}},
	{"hypot", []string{"hypotenuse"}}, {"crc", []string{"checksum"}}, {"sha", []string{"hash"}},
	{"md5", []string{"hash"}}, {"gzip", []string{"compression"}}, {"zlib", []string{"compression"}},
	{"deflate", []string{"compression"}}, {"flate", []string{"compression"}}, {"lzw", []string{"compression"}},
	{"tls", []string{"encryption", "secure"}}, {"tcp", []string{"network", "connection"}}, {"udp", []string{"network", "packet"}},
	{"conn", []string{"connection"}}, {"dial", []string{"connect"}}, {"ln", []string{"listener"}},
	{"sync", []string{"synchronization"}}, {"wg", []string{"wait", "group"}},
	{"nan", []string{"number"}},
	{"uniq", []string{"unique"}}, {"concat", []string{"join", "combine"}}, {"repr", []string{"representation"}},
}
