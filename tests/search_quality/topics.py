"""Judged topics and queries of the evaluation set.

Each topic is a handful of posts about one specific thing, written as people write posts; its
queries are judged to have exactly those posts as answers. Topics are in one language
(``ja``, ``en``) or code-switched (``mixed``); a query's class says what it tests:

* ``ja`` / ``en``: the query in the topic's language, worded differently from the posts;
* ``cross``: a Japanese query for an English topic or the reverse (only meaning can find it);
* ``mixed``: a query for a code-switched topic;
* ``keyword``: a rare name or term that occurs verbatim in some posts (what text search is for);
* ``none``: nothing in the corpus answers it (:data:`NO_ANSWER`).

``near_misses`` are posts that share words with a topic but are not about it: judged not
relevant, they keep a ranking honest about keyword overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Topic:
    key: str
    lang: str
    posts: tuple[str, ...]
    queries: tuple[tuple[str, str], ...]  # (class, query)
    near_misses: tuple[str, ...] = field(default=())


TOPICS: tuple[Topic, ...] = (
    # -- Japanese topics -------------------------------------------------------------------
    Topic(
        "sourdough",
        "ja",
        (
            "週末に自家製の天然酵母でパンを焼いた。発酵に丸一日かかったけど、外はカリッと中はもちもち。",
            "ルヴァン種を育てて一週間、ようやく元気に膨らむようになった。毎朝の餌やりが日課。",
            "サワードウの気泡がうまく入らない。加水率を75%に上げてみるか。",
            "パン焼きにハマってオーブン用の温度計まで買ってしまった。クープがきれいに開くと嬉しい。",
        ),
        (("ja", "自家製パンを焼く"), ("cross", "baking sourdough bread at home"), ("keyword", "ルヴァン種")),
        ("駅前のパンケーキ屋、二時間待ちだった。",),
    ),
    Topic(
        "tax_return",
        "ja",
        (
            "確定申告の書類、e-Taxでようやく提出できた。医療費控除の計算が面倒だった。",
            "副業の収入があるので今年から確定申告が必要らしい。経費の領収書を集めないと。",
            "マイナンバーカードを読み取ってスマホから申告。思ったより簡単だった。",
            "ふるさと納税のワンストップ特例を出し忘れて、結局税務署に申告しに行くことに。",
        ),
        (("ja", "税金の申告手続き"), ("cross", "filing my income tax return online")),
    ),
    Topic(
        "rescue_cat",
        "ja",
        (
            "保護猫を家族に迎えた。まだ警戒してソファの下から出てこない。",
            "うちの子猫、夜中に運動会を始めるので寝不足。",
            "猫用の爪とぎを三種類買ったのに、結局カーテンで爪を研いでいる。",
            "譲渡会で出会った三毛猫、今では膝の上で寝るようになった。",
        ),
        (("ja", "ねこを飼い始めた"), ("cross", "adopting a rescue kitten")),
        ("猫背を治したくてストレッチを始めた。",),
    ),
    Topic(
        "hay_fever",
        "ja",
        (
            "花粉がひどくて目がかゆい。今年は飛散量が多いらしい。",
            "くしゃみが止まらない。スギ花粉の季節はマスク必須。",
            "耳鼻科で舌下免疫療法を始めた。三年続けると効くらしい。",
            "抗アレルギー薬を飲むと眠くなるのがつらい。",
        ),
        (("ja", "花粉でくしゃみと鼻水"), ("cross", "hay fever allergy season")),
    ),
    Topic(
        "moving",
        "ja",
        (
            "引っ越しの荷造りが終わらない。段ボールが30箱を超えた。",
            "新居の鍵を受け取った。転入届は来週出しに行く。",
            "引っ越し業者の見積もり、3社比べたら倍近く違った。",
            "ネット回線の開通工事が引っ越しの二週間後。それまでテザリング生活。",
        ),
        (("ja", "新しい部屋への引越し準備"), ("cross", "packing boxes for moving to a new apartment")),
    ),
    Topic(
        "marathon",
        "ja",
        (
            "初めてのフルマラソン完走！ 30キロ過ぎからは足が棒のようだった。",
            "大会に向けて週40キロ走り込んでいる。ペース走がきつい。",
            "ランニングシューズを新調。厚底は反発がすごい。",
            "ハーフマラソンで自己ベスト更新、1時間45分を切れた。",
        ),
        (("ja", "マラソン大会に出た"), ("cross", "running my first marathon")),
        ("箱根駅伝の中継をこたつで見ながらみかんを食べた。",),
    ),
    Topic(
        "mt_fuji",
        "ja",
        (
            "富士山に登頂。ご来光が見えて涙が出た。",
            "高山病で八合目から頭痛がひどかった。次はもっとゆっくり登る。",
            "山小屋の予約が取れたので来月は富士登山。",
            "吉田ルートの下山道は砂利で滑りやすい。膝が笑ってる。",
        ),
        (
            ("ja", "富士山に登った"),
            ("cross", "climbing Mount Fuji to see the sunrise"),
            ("keyword", "吉田ルート"),
        ),
    ),
    Topic(
        "power_bill",
        "ja",
        (
            "今月の電気代が2万円を超えた。エアコンのせいか。",
            "電力会社を乗り換えたら月千円ほど安くなった。",
            "燃料費調整額が上がって光熱費がきつい。",
            "節電のために家中の電球をLEDに取り替えた。",
        ),
        (("ja", "電気料金が高い"), ("cross", "my electricity bill went up")),
        ("電気自動車の試乗をしてきた。加速が静か。",),
    ),
    Topic(
        "wisdom_tooth",
        "ja",
        (
            "親知らずを抜いた。麻酔が切れてから痛みがじわじわ来る。",
            "歯医者で虫歯が見つかって三回通うことに。",
            "抜歯後のほっぺたが腫れてリスみたいになってる。",
            "定期検診で歯石を取ってもらったらすっきりした。",
        ),
        (("ja", "親知らずの抜歯"), ("cross", "wisdom tooth extraction at the dentist")),
    ),
    Topic(
        "it_exam",
        "ja",
        (
            "基本情報技術者試験に合格した！午後問題はギリギリだった。",
            "資格の勉強、過去問を毎朝1時間解いている。",
            "応用情報の試験日まであと2週間。アルゴリズムの問題が苦手。",
            "合格発表のページを何度も更新してしまった。",
        ),
        (("ja", "IT系の資格試験に合格"), ("keyword", "基本情報技術者")),
    ),
    Topic(
        "ramen",
        "ja",
        (
            "家系ラーメンの店に並んだ。麺かため味濃いめでライス必須。",
            "二郎系に初挑戦。ニンニクマシマシで完食できず。",
            "つけ麺の濃厚魚介スープが最高だった。",
            "深夜のラーメンは罪の味。",
        ),
        (("ja", "ラーメン屋に行った"), ("cross", "eating ramen at a noodle shop")),
    ),
    Topic(
        "sports_day",
        "ja",
        (
            "娘の運動会。リレーでアンカーを走って一位！",
            "運動会のお弁当作りで朝4時起き。",
            "保育園の運動会、親子競技で本気を出して筋肉痛。",
            "息子が徒競走で転んだけど最後まで走った。",
        ),
        (("ja", "子どもの運動会"), ("cross", "my kid's school sports day")),
    ),
    Topic(
        "earthquake",
        "ja",
        (
            "夜中に地震。震度4で目が覚めた。",
            "緊急地震速報が鳴って心臓が止まるかと思った。",
            "防災リュックの中身を見直した。水と電池を追加。",
            "揺れが長かった。棚の本が落ちた。",
        ),
        (("ja", "地震で揺れた"), ("cross", "an earthquake woke me up last night")),
    ),
    Topic(
        "balcony_garden",
        "ja",
        (
            "ベランダのミニトマトが赤くなった。初収穫。",
            "きゅうりの苗を植えた。支柱を立てるのが難しい。",
            "家庭菜園のナスにアブラムシが大量発生。",
            "プランターでバジルを育てたらパスタに使い放題。",
        ),
        (("ja", "ベランダで野菜を育てる"), ("cross", "growing tomatoes on my balcony")),
    ),
    Topic(
        "shogi",
        "ja",
        (
            "藤井さんの対局を中継でずっと見てた。終盤の寄せが鮮やか。",
            "将棋アプリで初段になった。",
            "矢倉の定跡を覚えようとしてるけど難しい。",
            "詰将棋を毎日3問解くのが習慣。",
        ),
        (("ja", "将棋の勉強"), ("cross", "playing shogi, Japanese chess")),
    ),
    Topic(
        "declutter",
        "ja",
        (
            "クローゼットの服を半分捨てた。一年着なかったものは処分。",
            "断捨離したら部屋が広くなって気分もすっきり。",
            "メルカリで不用品を売ったら3万円になった。",
            "本棚の漫画を全部電子書籍に置き換えた。",
        ),
        (("ja", "いらない物を捨てて部屋を片付ける"), ("cross", "decluttering my closet")),
    ),
    Topic(
        "checkup",
        "ja",
        (
            "健康診断の結果、コレステロール値が要再検査。",
            "人間ドックでバリウムを飲んだ。下剤がつらい。",
            "血圧が高めと言われたので減塩を始めた。",
            "胃カメラは鎮静剤ありにしたら寝てる間に終わった。",
        ),
        (("ja", "健康診断で引っかかった"), ("cross", "annual medical checkup results")),
    ),
    Topic(
        "idol_live",
        "ja",
        (
            "推しのライブに当選！ 東京ドーム二日目。",
            "アリーナ席で推しと目が合った気がする。",
            "ペンライトの電池を買い忘れて会場前のコンビニに走った。",
            "チケットの抽選、全部落選した…",
        ),
        (("ja", "コンサートのチケットが当たった"), ("cross", "won tickets to my favorite idol's concert")),
    ),
    Topic(
        "road_bike",
        "ja",
        (
            "ロードバイクで琵琶湖一周してきた。200キロは長い。",
            "ビンディングペダルに慣れなくて信号で立ちごけした。",
            "ヒルクライムで心拍数が180まで上がった。",
            "自転車のチェーンに油を差したら走りが軽くなった。",
        ),
        (("ja", "ロードバイクで長距離を走る"), ("keyword", "ビンディング")),
    ),
    Topic(
        "english_study",
        "ja",
        (
            "オンライン英会話を始めて三か月。少し聞き取れるようになった。",
            "TOEICのスコアが150点上がった！",
            "英語のポッドキャストを通勤中に聞いている。",
            "シャドーイングを毎日続けるのがつらい。",
        ),
        (("ja", "英語の勉強を続けている"), ("cross", "practicing English conversation online")),
    ),
    Topic(
        "spice_curry",
        "ja",
        (
            "スパイスからカレーを作った。クミンとコリアンダーを炒める香りが最高。",
            "ガラムマサラを自分で調合してみた。",
            "チキンビリヤニに挑戦。米の炊き加減が難しい。",
            "スパイスカレーにハマって、スパイスの瓶が20本に増えた。",
        ),
        (("ja", "スパイスを使ったカレーを手作り"), ("cross", "cooking curry from whole spices")),
    ),
    Topic(
        "remote_work",
        "ja",
        (
            "在宅勤務で運動不足。一日の歩数が300歩だった。",
            "リモート会議でマイクがミュートのまま5分話していた。",
            "テレワーク用に昇降デスクを導入。腰痛が軽くなった。",
            "家で仕事していると昼と夜の区切りがなくなる。",
        ),
        (("ja", "リモートワークの悩み"), ("cross", "problems of working from home")),
    ),
    # -- English topics --------------------------------------------------------------------
    Topic(
        "rust",
        "en",
        (
            "Spent the whole afternoon fighting the borrow checker. Lifetimes finally clicked.",
            "Rewrote the parser in Rust; it's 4x faster than the Python version.",
            "cargo clippy found three bugs I would never have noticed.",
            "Async Rust with tokio still confuses me when it comes to Send bounds.",
        ),
        (
            ("en", "learning the Rust programming language"),
            ("cross", "Rustの所有権が難しい"),
            ("keyword", "clippy"),
        ),
    ),
    Topic(
        "k8s_outage",
        "en",
        (
            "Our Kubernetes cluster ran out of IP addresses and pods got stuck in Pending.",
            "Spent the night debugging a CrashLoopBackOff caused by a missing config map.",
            "Rolled back the deployment with kubectl rollout undo, production is fine again.",
            "The Helm chart upgrade broke the ingress; lesson learned about pinning versions.",
        ),
        (
            ("en", "outage in our container cluster"),
            ("cross", "本番環境の障害対応"),
            ("keyword", "CrashLoopBackOff"),
        ),
    ),
    Topic(
        "knitting",
        "en",
        (
            "Finished knitting my first sweater! The sleeves are slightly different lengths.",
            "Dropped a stitch three rows back and had to frog the whole thing.",
            "Bought merino wool yarn for a winter scarf.",
            "Cable knit patterns look hard but they are just crossed stitches.",
        ),
        (("en", "knitting with yarn"), ("cross", "毛糸で編み物をする")),
    ),
    Topic(
        "birding",
        "en",
        (
            "Saw a pileated woodpecker in the park this morning!",
            "Bought new binoculars for birding, 8x42 is perfect.",
            "Counted 23 species at the lake during the bird count.",
            "A hawk landed on our fence and all the sparrows vanished.",
        ),
        (("en", "bird watching"), ("cross", "野鳥観察が趣味")),
    ),
    Topic(
        "chess",
        "en",
        (
            "Lost a winning endgame because I flagged on time again.",
            "Finally crossed 1800 rating on lichess.",
            "Studying the Sicilian Najdorf; so many sharp lines.",
            "Blundered my queen in the opening, resigned on move 12.",
        ),
        (("en", "improving at online chess"), ("cross", "チェスの対局で負けた"), ("keyword", "lichess")),
    ),
    Topic(
        "car_repair",
        "en",
        (
            "Car battery died in the parking lot; a stranger gave me a jump start.",
            "Mechanic says the brake pads are worn down to the metal.",
            "Replaced the alternator myself following a YouTube tutorial.",
            "Check engine light came on; turned out to be a loose gas cap.",
        ),
        (("en", "my car needs repairs"), ("cross", "車が故障して修理に出した")),
    ),
    Topic(
        "podcast",
        "en",
        (
            "Recorded the first episode of our podcast. Audio levels were all over the place.",
            "Bought a dynamic mic to cut down on room echo while recording.",
            "Our show hit 1,000 downloads this week!",
            "Editing a one hour interview episode takes me about five hours.",
        ),
        (("en", "starting a podcast"),),
    ),
    Topic(
        "camping",
        "en",
        (
            "Pitched the tent in the rain; everything is soaked.",
            "Campfire s'mores under the stars, a perfect night.",
            "Forgot the tent poles. Slept in the car.",
            "A bear canister is mandatory at this campsite.",
        ),
        (("en", "camping trip in the woods"), ("cross", "テントを張ってキャンプした")),
    ),
    Topic(
        "job_hunt",
        "en",
        (
            "Had my final round interview today; the system design question went well.",
            "Got the offer! Negotiated a 10% higher salary.",
            "Rejected after the fourth interview. Back to applying.",
            "Practicing behavioral questions with the STAR method.",
        ),
        (("en", "job interviews and offers"), ("cross", "転職の面接を受けた")),
    ),
    Topic(
        "flight",
        "en",
        (
            "Flight cancelled, stuck at the airport overnight.",
            "Lost luggage again; the airline says two days.",
            "Upgraded to business class for free on the red-eye.",
            "Jet lag is brutal after a 14-hour flight.",
        ),
        (("en", "air travel troubles"), ("cross", "飛行機が欠航して空港で足止め")),
    ),
    Topic(
        "vinyl",
        "en",
        (
            "Found a first pressing of Kind of Blue at a thrift store!",
            "New turntable arrived; the warmth of vinyl is real.",
            "Cleaning old records with a carbon fiber brush.",
            "Record Store Day haul: five LPs and zero regrets.",
        ),
        (("en", "collecting vinyl records"), ("cross", "レコード収集")),
    ),
    Topic(
        "insomnia",
        "en",
        (
            "Awake at 3am again. Insomnia is wrecking me.",
            "Tried melatonin for a week; falling asleep is easier.",
            "No screens after 10pm has improved my sleep a lot.",
            "My sleep tracker says I got 4 hours of deep sleep... doubtful.",
        ),
        (("en", "I can't sleep at night"), ("cross", "夜眠れない")),
    ),
    Topic(
        "solar",
        "en",
        (
            "Installed solar panels on the roof; the meter runs backwards at noon.",
            "Our home battery kept the lights on during the storm outage.",
            "Solar payback period looks like 8 years with the tax credit.",
            "Cleaned pollen off the panels and output jumped 10%.",
        ),
        (("en", "solar power for my house"), ("cross", "屋根に太陽光パネルを設置")),
    ),
    Topic(
        "piano",
        "en",
        (
            "Practiced Chopin's nocturne for two hours; the left hand is still sloppy.",
            "Bought a digital piano with weighted keys.",
            "First piano recital as an adult. My hands were shaking.",
            "Learning to read sheet music at 35.",
        ),
        (("en", "learning to play the piano"), ("cross", "ピアノの練習")),
    ),
    # -- code-switched topics --------------------------------------------------------------
    Topic(
        "nextjs",
        "mixed",
        (
            "Next.jsのApp Routerに移行した。server componentsの考え方に慣れない。",
            "Vercelにdeployしたらbuildが通らない。環境変数の設定漏れだった。",
            "React 19のuse hookを試してみた。",
            "TypeScriptのtype errorが200件出てて見なかったことにした。",
        ),
        (("mixed", "Next.jsのデプロイでハマった"), ("keyword", "App Router")),
    ),
    Topic(
        "iphone",
        "mixed",
        (
            "iPhone 16 Proに機種変。カメラのzoomがすごい。",
            "AirPodsを片方なくした。Find Myで探したら車の中にあった。",
            "Apple Watchで心拍数をtrackingしてる。",
            "iOSをupdateしたらバッテリーの減りが早い。",
        ),
        (("mixed", "iPhoneを新しくした"), ("en", "upgrading to a new iPhone")),
    ),
    Topic(
        "ai_coding",
        "mixed",
        (
            "GitHub Copilotに書かせたコード、testが全部fail。",
            "ChatGPTにprompt投げて議事録をsummaryしてもらう。",
            "LLMのhallucinationで存在しないAPIを提案された。",
            "社内でAIコーディングツールのtrialが始まった。",
        ),
        (("mixed", "AIにコードを書かせる"), ("en", "coding with an AI assistant")),
    ),
    Topic(
        "games",
        "mixed",
        (
            "Nintendo Switchの新作、発売日にdownload購入。",
            "ゼルダのboss戦で3時間詰まってる。",
            "Steamのsaleでゲームを積みすぎた。",
            "オンライン対戦でrank upした！",
        ),
        (("mixed", "ゲームにハマってる"), ("en", "video games I'm playing")),
    ),
)

NO_ANSWER: tuple[str, ...] = (
    "量子コンピュータの仕組み",
    "確定拠出年金の運用方法",
    "how to fix a leaking faucet",
    "best pizza in Naples",
    "宇宙飛行士になる方法",
    "スキューバダイビングのライセンスを取る",
    "learning to surf big waves",
    "wedding speech ideas",
    "ウクレレのコード進行",
    "building a cryptocurrency mining rig",
    "盆栽の剪定のコツ",
    "着物の着付け教室",
    "beekeeping for beginners",
    "競馬の予想",
    "restoring an antique grandfather clock",
    "フラメンコを習う",
)
"""Queries nothing in the corpus answers: the best hit of each should say "no good match"."""

QUERY_CLASSES = ("ja", "en", "cross", "mixed", "keyword", "none")
