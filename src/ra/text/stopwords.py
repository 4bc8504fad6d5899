"""Stopwords for ``ra context``: words that say nothing about what a file is about.

Context analysis ranks a file's words by TF-IDF. Two kinds of word would crowd the top
of that ranking without telling the knowledge base anything:

- English function words (``the``, ``which``, ``however``). The list is the union of
  Stopwords-ISO's core English list (github.com/stopwords-iso/stopwords-en,
  ``stopwords-en.txt``, the ~175 words the original implementation counts) and the
  Snowball English list (snowballstem.org), plus the stems of English contractions
  (``doesn``, ``isn``…) that splitting at apostrophes leaves behind. The 1,298-word
  Stopwords-ISO *collection* was not used: it stops ``index``, ``state``, ``join``,
  ``value``, ``null``, ``open``, ``http`` or ``microsoft``, words that name topics in
  technical documentation; words merely common in the knowledge base get a low IDF anyway.
- Programming keywords, which a source file repeats far more often than any topic word.
  Rust's keywords, reserved words, primitive types and prelude names are stopwords for
  every file, as in the original implementation (conformance ``stopwords``). The keywords
  of Python, JavaScript/TypeScript, Go, C/C++ and Java apply only to files of that
  language (chosen by suffix, :func:`for_file`), so that, say, Go's ``map`` or JS's
  ``module`` stay searchable when the file being edited is a Rust or markdown file.

One deliberate difference from the original's Rust list: names that are topics of their
own in documentation stay searchable: ``Box``, ``Rc``, ``Arc``, ``Cell``, ``RefCell``,
``Mutex``, ``RwLock``, ``Iterator``, ``Drop``, ``Deref``, ``Send``, ``Sync``, ``panic``,
``array``, ``slice``, ``tuple``, ``reference``, ``pointer``, ``unit``. A file that uses
``Arc<Mutex<_>>`` is about shared-state concurrency, and the Rust book has a chapter on it.

Matching is ASCII case-insensitive: ``Option``, ``option`` and ``OPTION`` are all stopped.
"""

from __future__ import annotations

from pathlib import PurePath


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in text.split())


ENGLISH = _words("""
a about above after again against ain't all almost also am among an and another any
are aren aren't as at back be because been before being below between both but by can
can't cannot could could've couldn couldn't daren't dear did didn didn't do does doesn
doesn't doing don don't doubtful down during each either else even ever every few first
five for four from further get go goes got had hadn hadn't has hasn hasn't have haven
haven't having he he'd he'll he's her here here's hers herself high him himself his how
how'd how'll how's however i i'd i'll i'm i've if in into is isn isn't it it's its itself
just least less let let's like likely long made make many may me might might've mightn
mightn't more most must must've mustn mustn't my myself needn needn't neither never new
no nor not now of off often old on once one only or other ought oughtn't our ours
ourselves out over own put rather said same say says second see seen shall shan shan't
she she'd she'll she's should should've shouldn shouldn't since so some still such take
than that that'll that's the their theirs them themselves then there there's these they
they'd they'll they're they've this those three through tis to too twas two under until
up us very wants was wasn wasn't way we we'd we'll we're we've well were weren weren't
what what'd what's when when'd when'll when's where where'd where'll where's whether
which while who who'd who'll who's whom why why'd why'll why's will with won won't would
would've wouldn wouldn't yet you you'd you'll you're you've your yours yourself
yourselves
""")

#: Rust (doc.rust-lang.org/reference/keywords.html, std primitives and prelude).
RUST = _words("""
as break const continue crate else enum extern false fn for if impl in let loop match mod
move mut pub ref return self static struct super trait true type unsafe use where while
async await dyn
abstract become do final macro override priv typeof unsized virtual yield try gen
macro_rules raw safe union
bool char str i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 never
Option Some None Result Ok Err Clone Copy Default Eq PartialEq Ord PartialOrd Hash Debug
Display From Into TryFrom TryInto AsRef AsMut Extend Sized Unpin Fn FnMut FnOnce ToOwned
ToString Vec String
println print eprintln eprint format vec assert assert_eq assert_ne debug_assert
debug_assert_eq debug_assert_ne todo unimplemented unreachable
""")

PYTHON = _words("""
false none true and as assert async await break class continue def del elif else except
finally for from global if import in is lambda nonlocal not or pass raise return try
while with yield match case self cls args kwargs init print len isinstance str int float
bool dict
""")

JAVASCRIPT = _words("""
break case catch class const continue debugger default delete do else export extends
finally for function if import in instanceof new return super switch this throw try
typeof var void while with yield let static enum await implements package protected
interface private public null true false undefined async of any unknown never number
string boolean symbol bigint keyof readonly declare namespace module require abstract as
is infer satisfies constructor prototype console arguments
""")

GO = _words("""
break case chan const continue default defer else fallthrough for func go goto if import
interface map package range return select struct switch type var nil iota true false
make new len cap append copy delete panic recover bool byte rune int int8 int16 int32
int64 uint uint8 uint16 uint32 uint64 uintptr float32 float64 complex64 complex128
string error fmt println printf sprintf errorf
""")

C_CPP = _words("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while bool true false nullptr null alignas alignof
asm catch char8_t char16_t char32_t class concept consteval constexpr constinit
const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export
friend mutable namespace new noexcept operator private protected public
reinterpret_cast requires static_assert static_cast template this thread_local throw
try typeid typename using virtual wchar_t override final import module include define
ifdef ifndef endif undef pragma std size_t int8_t int16_t int32_t int64_t uint8_t
uint16_t uint32_t uint64_t printf cout cerr endl
""")

JAVA = _words("""
abstract assert boolean break byte case catch char class const continue default do
double else enum extends final finally float for goto if implements import instanceof
int interface long native new package private protected public return short static
strictfp super switch synchronized this throw throws transient try void volatile while
var record sealed permits yield true false null string system out println override
""")

#: The stopwords of every file: English plus Rust (the original implementation's set).
STOPWORDS = ENGLISH | RUST

#: File suffix → the language keywords that are stopwords for files of that language.
LANGUAGE_OF_SUFFIX = {
    **dict.fromkeys((".py", ".pyi", ".pyw"), PYTHON),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
                    JAVASCRIPT),
    ".go": GO,
    **dict.fromkeys((".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx",
                     ".h++", ".ipp", ".inl", ".ixx"), C_CPP),
    ".java": JAVA,
}


def for_file(path: str | PurePath) -> frozenset[str]:
    """The stopwords for a file: English and Rust, plus its own language's keywords."""
    extra = LANGUAGE_OF_SUFFIX.get(PurePath(path).suffix.lower())
    return STOPWORDS if extra is None else STOPWORDS | extra


def is_stopword(word: str, words: frozenset[str] = STOPWORDS) -> bool:
    """Whether ``word`` is in ``words``, ignoring ASCII case."""
    return (word.lower() if word.isascii() else word) in words
