"""Judged questions on the real exports in this folder (README.md says where they come from).

Each question names the export it is asked of (``lang``: the language of that export's posts), the
language it is asked in, and the status ids (the last part of a post's URL) judged to answer it;
an empty set means nothing in the export answers it. Questions were written by reading the posts,
worded as a person recalls a post rather than with its words; ``cross`` questions ask an English
or Chinese export in Spanish or Japanese (a reader's language need not be the writer's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPORTS = {"en": HERE / "en-quicoto.tar.gz", "zh": HERE / "zh-leask.tar.gz"}
"""The export of each language, as a person downloads it (a Mastodon archive tar.gz)."""


@dataclass(frozen=True)
class Question:
    lang: str  # the export asked
    asked_in: str  # the question's own language
    query: str
    relevant: frozenset[str]  # status ids; empty: no answer in the export

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


def _q(lang: str, query: str, *ids: str, asked_in: str = "") -> Question:
    return Question(lang, asked_in or lang, query, frozenset(ids))


NANOWRIMO = [
    "109272653504630700",
    "109275850383230667",
    "109276265871238894",
    "109281894465801046",
    "109287129826180178",
    "109292753280166141",
    "109299141177649357",
    "109305030507460752",
    "109310580588762121",
    "109316362811515022",
    "109321927741708355",
    "109326868775447536",
    "109332840282906479",
    "109338249390480088",
    "109344172532740304",
    "109349845978686683",
    "109437526840914363",
]
BACKBLAZE = [
    "109431524135443830",
    "109432176260843780",
    "109444317693310909",
    "109456682258509732",
    "109539119042239654",
    "109551417744385295",
]

QUESTIONS: tuple[Question, ...] = (
    # -- English export (a web developer's Mastodon account, 2022-2023) -------------------------
    _q("en", "a bowl of ramen in Barcelona that I did not like", "109497525987504555"),
    _q("en", "which password manager to use after leaving LastPass", "109573672890268101"),
    _q(
        "en",
        "the Artemis mission to the moon",
        "109335463138597167",
        "109352182691136283",
        "109499555873136607",
    ),
    _q("en", "Korean chicken soup with ginseng", "109625096912071503"),
    _q("en", "the quickest airport security check ever, in Seoul", "109243037141526020"),
    _q("en", "my daily word count while writing a novel in November", *NANOWRIMO),
    _q("en", "moving my server from Linode to netcup", "109546474872505155", "109596651879879344"),
    _q("en", "keeping the Mastodon instance's media files on Backblaze B2", *BACKBLAZE),
    _q("en", "a self-hosted link shortener", "109678109123350206", "109681279010582885"),
    _q("en", "layoffs at Twitter after Elon Musk took over", "109285052052237366", "109261606017743100"),
    _q("en", "Meta letting 11,000 employees go", "109313698577863304"),
    _q("en", "a TV series about the Tokyo night life", "109559296380818775"),
    _q("en", "Korean style fried chicken", "109558008165112944"),
    _q(
        "en",
        "adding webmentions to a WordPress blog",
        "109417809084402301",
        "109425962934953029",
        "109427932297321371",
    ),
    _q("en", "slow cooked pulled pork and ribs", "109704428936550410"),
    _q("en", "the podcast episode about dating apps in Korea", "109697704814971212"),
    _q("en", "the Halloween crowd disaster in Itaewon", "109252929183071218"),
    _q("en", "I bought a Nintendo Switch", "109381503954781387"),
    _q("en", "TikTok staff in China can see the data of European users", "109443418682348630"),
    _q("en", "first episode of The Last of Us", "109700964794662287"),
    _q("en", "the Wednesday series directed by Tim Burton", "109456949032599460"),
    _q("en", "how many steps I walked in a day", "109423659818584195"),
    _q(
        "en",
        "remote avatars and headers filling the disk of my Mastodon server",
        "109301558467648214",
        "109308543334888287",
        "109416438695655420",
    ),
    _q("en", "beef wellington recipe"),
    _q("en", "how to knit a scarf"),
    _q("en", "mortgage interest rates"),
    _q("en", "a training plan for my first marathon"),
    _q("en", "planting tomatoes in the garden"),
    _q("en", "learning to play the violin"),
    _q("en", "chess opening strategy"),
    _q("en", "advice from a divorce lawyer"),
    _q("en", "fixing a dripping kitchen faucet"),
    _q("en", "gift ideas for a wedding anniversary"),
    # -- Chinese export (a developer's Mastodon account, 2022-2023, traditional characters) -------
    _q(
        "zh",
        "自己架設 Mastodon 伺服器的經驗",
        "109577652877636501",
        "109577738467694249",
        "109577770326445499",
    ),
    _q("zh", "和兒子一起玩樂高星球大戰遊戲", "109579083282463281"),
    _q("zh", "Steam Deck 壞掉送修", "109640137444478286"),
    _q("zh", "手機衛星通訊的市場競爭", "109638690177051691"),
    _q("zh", "用氣量減少了燃氣帳單卻上漲", "109638823375172889"),
    _q("zh", "GitHub 服務掛掉了", "109883691486253541"),
    _q("zh", "家裡換了一台新的冷氣機", "109892341588225428"),
    _q("zh", "推特取消普通用戶的短信雙重驗證", "109884404598949688"),
    _q("zh", "記憶體和 SSD 焊死在主板上不能升級", "109751040857339982", "109751105631323948"),
    _q("zh", "在好市多買東西性價比高", "109750406614646417"),
    _q("zh", "做前端開發需要高配置的電腦", "109579038698848649"),
    _q("zh", "到了新站發的第一條打招呼", "109577455028088577"),
    _q("zh", "請搬過來的人設個大頭貼，不然認不出是誰", "109577601252238875"),
    _q("zh", "Go 語言比 Ruby 好，但說了會得罪人", "109577751419307379"),
    _q("zh", "希望 iPad 版可以把右邊那一欄關掉", "109577800284373635"),
    _q("zh", "iOS 多視窗時共享登入狀態很方便", "109578260252672646"),
    _q("zh", "韋伯太空望遠鏡拍到的宇宙照片", "109579160439902124"),
    _q("zh", "這裡沒有廣告反而讓我不習慣", "109579225347504168"),
    _q("zh", "開玩笑說用了長毛象就會被斷掉衛星網路", "109638810766603177"),
    _q("zh", "充電功率那麼大，接地線很重要", "109640133586488884"),
    _q("zh", "這種時候沒被裁員已經算不錯了", "109750993261496724"),
    _q("zh", "上岸是不是指財務自由", "109751003059929881"),
    _q("zh", "用裙子長短判斷經濟好壞的說法", "109751112812079404"),
    _q("zh", "不合理的事情說成信仰就都解釋得通", "109892343562715762"),
    _q("zh", "勸寫程式的人改行去做業務", "109893116221513747"),
    _q("zh", "紅燒肉的做法"),
    _q("zh", "如何學習彈吉他"),
    _q("zh", "馬拉松訓練計劃"),
    _q("zh", "房貸利率是多少"),
    _q("zh", "婚禮上的祝福語"),
    _q("zh", "養貓要注意什麼"),
    _q("zh", "去日本旅遊的行程安排"),
    _q("zh", "股票投資的心得"),
    _q("zh", "世界盃足球賽的比分"),
    # -- the same exports asked in another language -----------------------------------------------
    _q("en", "sopa coreana de pollo con ginseng", "109625096912071503", asked_in="es"),
    _q(
        "en",
        "despidos en Twitter tras la llegada de Elon Musk",
        "109285052052237366",
        "109261606017743100",
        asked_in="es",
    ),
    _q(
        "en",
        "la misión Artemis a la luna",
        "109335463138597167",
        "109352182691136283",
        "109499555873136607",
        asked_in="es",
    ),
    _q("en", "receta de paella valenciana", asked_in="es"),
    _q("en", "clases de baile de salsa", asked_in="es"),
    _q("zh", "息子とレゴのスター・ウォーズのゲームで遊んだ", "109579083282463281", asked_in="ja"),
    _q("zh", "GitHub が落ちていた", "109883691486253541", asked_in="ja"),
    _q("zh", "着物の着付け教室", asked_in="ja"),
    _q("zh", "盆栽の育て方", asked_in="ja"),
)


def build_archive(db: Path, langs: Sequence[str]) -> Path:
    """Import the exports of ``langs`` (as a person does: the downloaded tar.gz) into the archive
    ``db`` and embed them with the bundled model."""
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_export, open_reader
    from mcpkit.archive.store import Store

    store = Store(db)
    try:
        for lang in langs:
            import_export(open_reader(EXPORTS[lang]), EXPORTS[lang], store)
        embed_missing(store, "content", create_embedder(None))
    finally:
        store.close()
    return db


def status_id(post: Mapping[str, object]) -> str:
    """The status id of an archive post: the last part of its URL."""
    return str(post.get("url") or "").rstrip("/").rsplit("/", 1)[-1]
