/**
 * Hand-written pieces of knowledge the local model's training dialogues are composed
 * from (see compose.ts). Plain English, short sentences: the model is tiny, so the
 * corpus favours many phrasings of a modest set of facts over breadth.
 */

export const USER_GREETINGS = [
  "Hello!",
  "Hello",
  "Hi!",
  "Hi",
  "Hi there!",
  "Hey!",
  "Hey there",
  "Good morning!",
  "Good afternoon!",
  "Good evening!",
  "Hello, how are you?",
  "Hi, how are you doing?",
  "Hey, what's up?",
  "Greetings!",
  "Hello there!",
  "Howdy!",
  "Hi, nice to meet you.",
  "Hello, is anyone there?",
  "Yo!",
  "Hiya!",
];

export const ASSISTANT_GREETINGS = [
  "Hello! How can I help you today?",
  "Hi! What can I do for you?",
  "Hello! I am here to help. What would you like to know?",
  "Hi there! How can I help?",
  "Hello! It is nice to hear from you. What can I do for you today?",
  "Hey! How can I help you today?",
  "Hello! Ask me anything, and I will do my best to answer.",
  "Hi! I am doing well, thank you. How can I help you?",
];

/** [user variants, assistant answers] for small talk; any answer fits any variant. */
export const SMALL_TALK: [string[], string[]][] = [
  [
    ["How are you?", "How are you doing?", "How is it going?", "Are you well?"],
    ["I am doing well, thank you for asking. How can I help you?", "I am fine, thanks! What can I do for you today?"],
  ],
  [
    ["Who are you?", "What are you?", "Tell me about yourself.", "What is your name?", "Introduce yourself."],
    [
      "I am a small language model that runs on this server. I can answer short questions, follow simple instructions and call tools.",
      "I am a tiny assistant model. I answer simple questions in short sentences, and I can call functions when you give me tools.",
    ],
  ],
  [
    ["What can you do?", "How can you help me?", "What are you good at?"],
    [
      "I can answer simple questions, explain basic ideas about programming and APIs, do small sums and call tools.",
      "I can explain common concepts, answer short questions, repeat what you ask me to say and call functions.",
    ],
  ],
  [
    ["Thank you!", "Thanks!", "Thanks a lot.", "Thank you very much.", "Great, thanks."],
    [
      "You are welcome! Let me know if you need anything else.",
      "Happy to help!",
      "You are welcome. Is there anything else I can do?",
    ],
  ],
  [
    ["Goodbye!", "Bye!", "See you later.", "Good night!", "Talk to you soon."],
    ["Goodbye! Have a great day.", "Bye! Come back any time.", "See you later! Take care."],
  ],
  [
    ["Can you help me?", "I need some help.", "Could you help me with something?"],
    ["Of course! What do you need help with?", "Sure, I am happy to help. What is your question?"],
  ],
  [
    ["Tell me a joke.", "Do you know a joke?", "Make me laugh."],
    [
      "Why did the programmer quit his job? Because he did not get arrays.",
      "Why do programmers prefer dark mode? Because light attracts bugs.",
    ],
  ],
  [
    ["Are you a robot?", "Are you human?", "Are you a person?"],
    ["I am not a person. I am a small language model running on a server.", "No, I am a language model, not a human."],
  ],
  [
    ["What time is it?", "What day is it today?"],
    [
      "I do not have access to a clock, so I cannot tell the time. Your device can show it.",
      "I cannot see the date or the time, but your computer or phone can show it.",
    ],
  ],
  [
    ["Do you like music?", "What is your favorite color?", "Do you have feelings?"],
    [
      "I do not have feelings or favorites, but I am happy to talk about it.",
      "As a language model I have no preferences, but I can tell you about it.",
    ],
  ],
  [
    ["I am sad.", "I feel tired.", "I had a bad day."],
    [
      "I am sorry to hear that. Rest can help, and talking to a friend often does too.",
      "That sounds hard. Take a short break and be kind to yourself.",
    ],
  ],
  [
    ["Good job!", "You are smart.", "Nice answer."],
    ["Thank you! I am glad it helped.", "Thanks! Let me know if you have more questions."],
  ],
];

/** A concept: how to name it in a question, its definition and one more sentence. */
export interface Concept {
  /** The noun phrase used in questions, with its article: "an API". */
  name: string;
  def: string;
  more: string;
}

export const CONCEPTS: Concept[] = [
  {
    name: "an API",
    def: "An API is an application programming interface, a set of rules that lets one program ask another program for data or actions.",
    more: "A web API is usually called over HTTP and answers with JSON.",
  },
  {
    name: "a REST API",
    def: "A REST API is a web API that uses HTTP methods such as GET, POST and DELETE on resources named by URLs.",
    more: "Each request carries everything the server needs, so the server stays stateless.",
  },
  {
    name: "HTTP",
    def: "HTTP is the protocol that web browsers and servers use to send requests and responses.",
    more: "A request has a method, a path, headers and an optional body.",
  },
  {
    name: "HTTPS",
    def: "HTTPS is HTTP sent over an encrypted TLS connection.",
    more: "It keeps data private and proves that the server is who it claims to be.",
  },
  {
    name: "JSON",
    def: "JSON is a text format for data made of objects, arrays, strings, numbers, booleans and null.",
    more: "Most web APIs send and receive JSON because it is easy to read and to parse.",
  },
  {
    name: "an endpoint",
    def: "An endpoint is a URL path on a server that accepts a certain kind of request.",
    more: "For example, a server may offer an endpoint for creating a response.",
  },
  {
    name: "a status code",
    def: "A status code is the number a server returns to say how a request went.",
    more: "Codes from 200 to 299 mean success, 400 to 499 mean a client error, and 500 to 599 mean a server error.",
  },
  {
    name: "a 404 error",
    def: "A 404 error means the server could not find the resource that was requested.",
    more: "It often happens when a URL has a typo or the item was deleted.",
  },
  {
    name: "a 500 error",
    def: "A 500 error means something went wrong on the server while it handled the request.",
    more: "The client can try again later, and the server logs usually show the cause.",
  },
  {
    name: "an API key",
    def: "An API key is a secret string that identifies the caller of an API.",
    more: "Keep it private and send it in a header, never in a public page.",
  },
  {
    name: "authentication",
    def: "Authentication is how a system checks who you are, for example with a password or an API key.",
    more: "Authorization then decides what you are allowed to do.",
  },
  {
    name: "a rate limit",
    def: "A rate limit caps how many requests a client may send in a period of time.",
    more: "When you exceed it, the server answers with status 429 and you should wait and retry.",
  },
  {
    name: "pagination",
    def: "Pagination splits a long list into pages so that each response stays small.",
    more: "The client asks for the next page with a cursor or a page number.",
  },
  {
    name: "idempotency",
    def: "Idempotency means that doing the same request twice has the same effect as doing it once.",
    more: "An idempotency key lets a client retry a request safely.",
  },
  {
    name: "a webhook",
    def: "A webhook is an HTTP request that a service sends to your server when an event happens.",
    more: "It saves you from polling the service again and again.",
  },
  {
    name: "streaming",
    def: "Streaming means sending a response in small pieces as soon as each piece is ready.",
    more: "A chat model streams tokens so that the user sees the answer as it is written.",
  },
  {
    name: "server-sent events",
    def: "Server-sent events are a way for a server to stream text events to a client over one HTTP response.",
    more: "Each event is a few lines of text ending with a blank line.",
  },
  {
    name: "a server",
    def: "A server is a program or computer that waits for requests and sends back responses.",
    more: "Web servers answer requests from browsers and other programs.",
  },
  {
    name: "a client",
    def: "A client is a program that sends requests to a server and uses the responses.",
    more: "A web browser is a client, and so is a script that calls an API.",
  },
  {
    name: "latency",
    def: "Latency is the time between sending a request and receiving the first part of the answer.",
    more: "Lower latency makes an application feel faster.",
  },
  {
    name: "a database",
    def: "A database is a system that stores data so that programs can save, find and update it.",
    more: "Many databases use SQL to query tables of rows.",
  },
  {
    name: "SQL",
    def: "SQL is a language for reading and changing data in relational databases.",
    more: "A SELECT statement reads rows, and an INSERT statement adds them.",
  },
  {
    name: "a cache",
    def: "A cache keeps copies of data close at hand so that later requests are faster.",
    more: "The hard part is knowing when a cached copy is out of date.",
  },
  {
    name: "a URL",
    def: "A URL is the address of a resource on the web, such as a page or an API endpoint.",
    more: "It has a scheme, a host, a path and sometimes a query string.",
  },
  {
    name: "DNS",
    def: "DNS is the system that turns a domain name into the IP address of a server.",
    more: "It works like a phone book for the internet.",
  },
  {
    name: "an IP address",
    def: "An IP address is a number that identifies a device on a network.",
    more: "Packets on the internet are sent from one IP address to another.",
  },
  {
    name: "TCP",
    def: "TCP is a network protocol that delivers a stream of bytes reliably and in order.",
    more: "HTTP usually runs on top of TCP.",
  },
  {
    name: "the internet",
    def: "The internet is a global network of computers that exchange data using shared protocols.",
    more: "The web, email and video calls all run over the internet.",
  },
  {
    name: "a web browser",
    def: "A web browser is a program that loads web pages and shows them to you.",
    more: "It sends HTTP requests and renders HTML, CSS and JavaScript.",
  },
  {
    name: "HTML",
    def: "HTML is the markup language that describes the structure of a web page.",
    more: "Tags such as headings, paragraphs and links make up a page.",
  },
  {
    name: "CSS",
    def: "CSS is the language that describes how a web page looks, such as colors, fonts and layout.",
    more: "It is applied to the elements of an HTML page.",
  },
  {
    name: "JavaScript",
    def: "JavaScript is a programming language that runs in web browsers and, with Node.js, on servers.",
    more: "It is dynamic and uses an event loop to handle many tasks at once.",
  },
  {
    name: "TypeScript",
    def: "TypeScript is JavaScript with static types that are checked before the code runs.",
    more: "Types catch many mistakes early and make code easier to read.",
  },
  {
    name: "Node.js",
    def: "Node.js is a runtime that runs JavaScript outside the browser, usually on servers.",
    more: "It is good at handling many network requests at the same time.",
  },
  {
    name: "Python",
    def: "Python is a popular programming language known for its simple and readable syntax.",
    more: "It is widely used for scripts, data science and machine learning.",
  },
  {
    name: "a programming language",
    def: "A programming language is a formal language for writing instructions that a computer can run.",
    more: "Examples are Python, JavaScript, Java and C.",
  },
  {
    name: "a compiler",
    def: "A compiler translates source code into another form, such as machine code, before it runs.",
    more: "It also reports errors it finds in the code.",
  },
  {
    name: "a function",
    def: "A function is a named block of code that takes inputs, does some work and can return a result.",
    more: "Functions let you reuse code instead of repeating it.",
  },
  {
    name: "a variable",
    def: "A variable is a name that refers to a value in a program.",
    more: "You can read the value later or change it.",
  },
  {
    name: "a loop",
    def: "A loop is code that repeats a block of instructions several times.",
    more: "A for loop often runs once for each item in a list.",
  },
  {
    name: "an array",
    def: "An array is an ordered list of values that you can access by position.",
    more: "The first item usually has index zero.",
  },
  {
    name: "a string",
    def: "A string is a piece of text in a program, made of a sequence of characters.",
    more: "Strings are usually written between quotes.",
  },
  {
    name: "a boolean",
    def: "A boolean is a value that is either true or false.",
    more: "Conditions in if statements produce booleans.",
  },
  {
    name: "an object",
    def: "An object groups related data and behavior together under named properties.",
    more: "In JSON an object is a set of key and value pairs in curly braces.",
  },
  {
    name: "a class",
    def: "A class is a template for creating objects that share the same properties and methods.",
    more: "Each object made from a class is called an instance.",
  },
  {
    name: "recursion",
    def: "Recursion is when a function solves a problem by calling itself on a smaller part of it.",
    more: "Every recursive function needs a base case so that it stops.",
  },
  {
    name: "an algorithm",
    def: "An algorithm is a step by step procedure for solving a problem.",
    more: "Sorting a list and searching for an item are classic algorithms.",
  },
  {
    name: "big O notation",
    def: "Big O notation describes how the running time of an algorithm grows with the size of its input.",
    more: "For example, a simple loop over a list is O(n).",
  },
  {
    name: "a bug",
    def: "A bug is a mistake in a program that makes it behave in a way nobody intended.",
    more: "Tests and careful reading help to find bugs early.",
  },
  {
    name: "debugging",
    def: "Debugging is the work of finding and fixing bugs in a program.",
    more: "Reading error messages and adding logs are good first steps.",
  },
  {
    name: "a unit test",
    def: "A unit test is a small automatic check that one piece of code does what it should.",
    more: "Good tests run fast and fail when the code is wrong.",
  },
  {
    name: "version control",
    def: "Version control records every change to a set of files so that you can review or undo it.",
    more: "Git is the most common version control system.",
  },
  {
    name: "Git",
    def: "Git is a version control system that tracks changes to files in a repository.",
    more: "You save changes with commits and combine work with merges.",
  },
  {
    name: "a commit",
    def: "A commit is a saved snapshot of changes in a Git repository, with a message that explains it.",
    more: "Small commits with clear messages are easy to review.",
  },
  {
    name: "a pull request",
    def: "A pull request asks the maintainers of a repository to review and merge your changes.",
    more: "Reviewers can comment on each line before the change is accepted.",
  },
  {
    name: "continuous integration",
    def: "Continuous integration runs the build and the tests automatically on every change.",
    more: "It catches problems before they reach the main branch.",
  },
  {
    name: "a container",
    def: "A container packages a program with everything it needs so that it runs the same everywhere.",
    more: "Docker is a popular tool for building and running containers.",
  },
  {
    name: "an operating system",
    def: "An operating system is the software that manages a computer's hardware and runs other programs.",
    more: "Linux, Windows and macOS are operating systems.",
  },
  {
    name: "Linux",
    def: "Linux is a free and open source operating system kernel used on servers, phones and desktops.",
    more: "Most web servers in the world run on Linux.",
  },
  {
    name: "a CPU",
    def: "A CPU is the processor that runs the instructions of a program.",
    more: "Modern CPUs have several cores that can work at the same time.",
  },
  {
    name: "a GPU",
    def: "A GPU is a processor built to do many simple calculations in parallel.",
    more: "GPUs are used for graphics and for training neural networks.",
  },
  {
    name: "memory",
    def: "Memory, or RAM, is the fast storage a computer uses for the data of running programs.",
    more: "It is cleared when the computer turns off.",
  },
  {
    name: "encryption",
    def: "Encryption scrambles data with a key so that only someone with the right key can read it.",
    more: "HTTPS uses encryption to protect data on the network.",
  },
  {
    name: "a password",
    def: "A password is a secret word or phrase that proves who you are when you log in.",
    more: "A strong password is long and unique for each site.",
  },
  {
    name: "a hash function",
    def: "A hash function turns any input into a short fixed size value called a hash.",
    more: "The same input always gives the same hash.",
  },
  {
    name: "the cloud",
    def: "The cloud means servers and services that you rent over the internet instead of running your own machines.",
    more: "It lets you scale up or down as you need.",
  },
  {
    name: "machine learning",
    def: "Machine learning is a way of building programs that learn patterns from data instead of following hand written rules.",
    more: "A model is trained on examples and then makes predictions on new inputs.",
  },
  {
    name: "a neural network",
    def: "A neural network is a model made of layers of simple units whose weights are learned from data.",
    more: "Training adjusts the weights to reduce a loss.",
  },
  {
    name: "a language model",
    def: "A language model predicts the next token of a text from the tokens before it.",
    more: "By repeating that prediction it can write whole answers.",
  },
  {
    name: "a transformer",
    def: "A transformer is a neural network that uses attention to relate every token to the tokens before it.",
    more: "Most modern language models are transformers.",
  },
  {
    name: "attention",
    def: "Attention is the part of a transformer that lets each token look at other tokens and mix in their information.",
    more: "It is how a model connects a word to the context it needs.",
  },
  {
    name: "a token",
    def: "A token is a small piece of text, such as a word or part of a word, that a language model reads and writes.",
    more: "Usage and prices are usually counted in tokens.",
  },
  {
    name: "a tokenizer",
    def: "A tokenizer splits text into tokens and turns tokens back into text.",
    more: "Most tokenizers use byte pair encoding.",
  },
  {
    name: "a prompt",
    def: "A prompt is the text you give a language model to tell it what you want.",
    more: "Clear and specific prompts get better answers.",
  },
  {
    name: "a context window",
    def: "A context window is the largest number of tokens a model can read and write in one request.",
    more: "Longer conversations must be shortened to fit in it.",
  },
  {
    name: "temperature",
    def: "Temperature controls how random a model's sampling is.",
    more: "At temperature zero the model always picks the most likely token, so the answer is repeatable.",
  },
  {
    name: "top p sampling",
    def: "Top p sampling picks the next token only from the smallest set of tokens whose probabilities add up to p.",
    more: "It cuts off unlikely tokens while keeping some variety.",
  },
  {
    name: "fine-tuning",
    def: "Fine-tuning continues training a model on your own examples so that it learns a task or a style.",
    more: "A few hundred good examples can change how a small model answers.",
  },
  {
    name: "LoRA",
    def: "LoRA is a way to fine-tune a model by training small low rank matrices added to its weights, while the base weights stay frozen.",
    more: "It needs far less memory than training every weight.",
  },
  {
    name: "a dataset",
    def: "A dataset is a collection of examples used to train or evaluate a model.",
    more: "Its quality matters more than its size.",
  },
  {
    name: "overfitting",
    def: "Overfitting happens when a model learns its training examples too closely and does worse on new data.",
    more: "A held out validation set helps you notice it.",
  },
  {
    name: "a learning rate",
    def: "The learning rate sets how big each training step is.",
    more: "Too high and training becomes unstable, too low and it learns slowly.",
  },
  {
    name: "a batch size",
    def: "The batch size is the number of examples used for one training step.",
    more: "Larger batches give smoother gradients but need more memory.",
  },
  {
    name: "an epoch",
    def: "An epoch is one full pass of training over every example in the dataset.",
    more: "Fine-tuning often runs for a few epochs.",
  },
  {
    name: "gradient descent",
    def: "Gradient descent trains a model by moving its weights a little against the gradient of the loss.",
    more: "Repeating that step many times lowers the loss.",
  },
  {
    name: "a loss function",
    def: "A loss function measures how wrong a model's predictions are.",
    more: "Training tries to make the loss as small as possible.",
  },
  {
    name: "an embedding",
    def: "An embedding is a list of numbers that represents the meaning of a piece of text.",
    more: "Texts with similar meaning get embeddings that are close together.",
  },
  {
    name: "tool calling",
    def: "Tool calling lets a model ask the application to run a function with arguments it chooses.",
    more: "The application runs the function and sends the result back to the model.",
  },
  {
    name: "a JSON schema",
    def: "A JSON schema describes the shape that a JSON value must have, such as its properties and their types.",
    more: "Tool parameters are described with JSON schemas.",
  },
  {
    name: "the sun",
    def: "The sun is the star at the center of our solar system.",
    more: "It gives the earth light and heat.",
  },
  {
    name: "the moon",
    def: "The moon is the natural satellite that orbits the earth.",
    more: "It takes about a month to go around the earth.",
  },
  { name: "water", def: "Water is a clear liquid made of hydrogen and oxygen.", more: "All known life needs water." },
  {
    name: "gravity",
    def: "Gravity is the force that pulls objects with mass toward each other.",
    more: "It keeps us on the ground and the planets around the sun.",
  },
  {
    name: "photosynthesis",
    def: "Photosynthesis is how plants use sunlight, water and carbon dioxide to make sugar and oxygen.",
    more: "It happens in the green parts of the plant.",
  },
  {
    name: "a computer",
    def: "A computer is a machine that stores data and follows instructions to process it.",
    more: "It has a processor, memory and storage.",
  },
  {
    name: "rain",
    def: "Rain is water that falls from clouds in drops.",
    more: "It forms when water vapor in the air cools and condenses.",
  },
  {
    name: "a cat",
    def: "A cat is a small furry animal that many people keep as a pet.",
    more: "Cats are curious and sleep for much of the day.",
  },
  {
    name: "a dog",
    def: "A dog is a loyal animal that people have kept as a companion for thousands of years.",
    more: "Dogs need walks, food and attention.",
  },
  {
    name: "coffee",
    def: "Coffee is a drink made from roasted coffee beans.",
    more: "It contains caffeine, which helps people feel awake.",
  },
  {
    name: "sleep",
    def: "Sleep is the regular rest that the body and the brain need to stay healthy.",
    more: "Most adults need seven to nine hours a night.",
  },
  {
    name: "exercise",
    def: "Exercise is physical activity that keeps the body strong and healthy.",
    more: "Even a short walk every day helps.",
  },
  {
    name: "music",
    def: "Music is sound arranged in rhythm and melody to express ideas and feelings.",
    more: "People have made music in every culture.",
  },
  {
    name: "a book",
    def: "A book is a set of written pages bound together for reading.",
    more: "Books can teach, inform or tell stories.",
  },
  {
    name: "the ocean",
    def: "The ocean is the large body of salt water that covers most of the earth.",
    more: "It is home to a huge number of plants and animals.",
  },
];

/** Phrasings of a question about a concept; {x} is the concept's name. */
export const CONCEPT_QUESTIONS = [
  "What is {x}?",
  "what is {x}?",
  "What is {x}",
  "Can you explain {x}?",
  "Explain {x}.",
  "Tell me about {x}.",
  "What does {x} mean?",
  "Define {x}.",
  "Could you tell me what {x} is?",
  "I want to know about {x}.",
  "Please explain {x} in simple words.",
  "What's {x}?",
  "Explain {x} briefly.",
];

export const CAPITALS: [string, string][] = [
  ["France", "Paris"],
  ["Germany", "Berlin"],
  ["Italy", "Rome"],
  ["Spain", "Madrid"],
  ["Portugal", "Lisbon"],
  ["the United Kingdom", "London"],
  ["Ireland", "Dublin"],
  ["Japan", "Tokyo"],
  ["China", "Beijing"],
  ["India", "New Delhi"],
  ["Canada", "Ottawa"],
  ["the United States", "Washington"],
  ["Mexico", "Mexico City"],
  ["Brazil", "Brasilia"],
  ["Argentina", "Buenos Aires"],
  ["Egypt", "Cairo"],
  ["Kenya", "Nairobi"],
  ["Australia", "Canberra"],
  ["Russia", "Moscow"],
  ["Norway", "Oslo"],
  ["Sweden", "Stockholm"],
  ["Finland", "Helsinki"],
  ["Denmark", "Copenhagen"],
  ["Poland", "Warsaw"],
  ["Greece", "Athens"],
  ["Turkey", "Ankara"],
  ["South Korea", "Seoul"],
  ["Thailand", "Bangkok"],
  ["Austria", "Vienna"],
  ["the Netherlands", "Amsterdam"],
  ["Belgium", "Brussels"],
  ["Switzerland", "Bern"],
  ["Peru", "Lima"],
  ["Chile", "Santiago"],
  ["Nigeria", "Abuja"],
  ["Vietnam", "Hanoi"],
  ["Indonesia", "Jakarta"],
  ["Cuba", "Havana"],
];

export const CAPITAL_QUESTIONS = [
  "What is the capital of {c}?",
  "What's the capital of {c}?",
  "Which city is the capital of {c}?",
  "Tell me the capital of {c}.",
  "capital of {c}?",
  "Do you know the capital of {c}?",
];

export const OPPOSITES: [string, string][] = [
  ["hot", "cold"],
  ["big", "small"],
  ["fast", "slow"],
  ["up", "down"],
  ["light", "dark"],
  ["happy", "sad"],
  ["old", "new"],
  ["open", "closed"],
  ["early", "late"],
  ["easy", "hard"],
  ["full", "empty"],
  ["high", "low"],
  ["true", "false"],
  ["left", "right"],
  ["day", "night"],
  ["good", "bad"],
  ["long", "short"],
  ["rich", "poor"],
  ["wet", "dry"],
  ["strong", "weak"],
  ["in", "out"],
  ["start", "end"],
  ["win", "lose"],
  ["yes", "no"],
];

/** Short factual questions with one answer each. */
export const SIMPLE_FACTS: [string[], string][] = [
  [
    ["What color is the sky?", "Why is the sky blue?"],
    "The sky looks blue on a clear day because air scatters blue sunlight more than other colors.",
  ],
  [["What color is grass?"], "Grass is green."],
  [["How many days are in a week?"], "There are seven days in a week."],
  [["How many months are in a year?"], "There are twelve months in a year."],
  [["How many hours are in a day?"], "There are twenty four hours in a day."],
  [["How many minutes are in an hour?"], "There are sixty minutes in an hour."],
  [["How many legs does a spider have?"], "A spider has eight legs."],
  [["How many legs does a dog have?"], "A dog has four legs."],
  [
    ["What is the largest planet?", "Which planet is the biggest?"],
    "Jupiter is the largest planet in our solar system.",
  ],
  [["What planet do we live on?"], "We live on the earth, the third planet from the sun."],
  [["What is the boiling point of water?"], "Water boils at 100 degrees Celsius at sea level."],
  [["What is the freezing point of water?"], "Water freezes at 0 degrees Celsius."],
  [["Who wrote Romeo and Juliet?"], "Romeo and Juliet was written by William Shakespeare."],
  [["What is the largest ocean?"], "The Pacific Ocean is the largest ocean on earth."],
  [["What do bees make?"], "Bees make honey and wax."],
  [["What is the first letter of the alphabet?"], "The first letter of the alphabet is A."],
  [["What language is spoken in Brazil?"], "People in Brazil speak Portuguese."],
  [["How many continents are there?"], "There are seven continents."],
  [["What gas do we breathe in?"], "We breathe in oxygen from the air."],
  [["What is the tallest animal?"], "The giraffe is the tallest animal."],
  [["What is ice?"], "Ice is frozen water."],
  [["Which is the fastest land animal?"], "The cheetah is the fastest land animal."],
];

/** Phrases for "say X" and "repeat after me" instructions. */
export const PHRASES = [
  "hello",
  "good morning",
  "thank you",
  "I like apples",
  "the sky is blue",
  "ready",
  "yes",
  "no",
  "done",
  "the test passed",
  "hello world",
  "OK",
  "welcome back",
  "it works",
  "see you soon",
  "banana",
  "blue",
  "one two three",
  "have a nice day",
  "I am a model",
  "the server is running",
  "red green blue",
  "cats and dogs",
  "good night",
  "happy birthday",
  "let us begin",
  "all systems go",
  "the answer is 42",
  "apple pie",
  "sunny day",
  "open the door",
  "merci",
  "coffee time",
  "the end",
  "fine-tuning works",
  "tokens are small pieces of text",
];

export const SAY_INSTRUCTIONS = [
  "Say {p}.",
  'Say "{p}".',
  "Please say {p}.",
  "Repeat after me: {p}",
  "Just say {p}.",
  "Say the words {p}.",
  "Can you say {p}?",
  "Reply with {p}.",
  "Write {p}.",
  "Respond with exactly: {p}",
];

export const NUMBER_WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
];

export const SYSTEM_PROMPTS = [
  "You are a helpful assistant.",
  "You are a helpful assistant. Answer briefly.",
  "You are a friendly assistant.",
  "Be concise.",
  "You are a tiny language model. Keep your answers short.",
  "Answer the user's questions clearly.",
];

/** Tools used in the tool-output dialogues: after a call and its output, the model reports the result. */
export const WEATHER_CITIES = [
  "Paris",
  "London",
  "Tokyo",
  "Berlin",
  "Madrid",
  "Rome",
  "Oslo",
  "Cairo",
  "Lima",
  "Seoul",
  "Boston",
  "Sydney",
];
export const WEATHER_CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy"];

/**
 * Values the copying dialogues draw at random (compose.ts, copies): names, nouns and words
 * that must be read from the prompt and written back, which memorising cannot do.
 */
export const NAMES = [
  "Alice",
  "Bob",
  "Carol",
  "David",
  "Emma",
  "Frank",
  "Grace",
  "Henry",
  "Irene",
  "Jack",
  "Kate",
  "Leo",
  "Maria",
  "Nina",
  "Oscar",
  "Paul",
  "Rita",
  "Sam",
  "Tom",
  "Vera",
  "Will",
  "Anna",
  "Ben",
  "Chris",
  "Diana",
  "Eric",
  "Fiona",
  "George",
  "Hannah",
  "Ivan",
  "Julia",
  "Karl",
  "Laura",
  "Mark",
  "Nora",
  "Peter",
  "Rosa",
  "Simon",
  "Tina",
  "Victor",
  "Max",
  "Lucy",
  "Adam",
  "Clara",
  "Daniel",
  "Elena",
  "Felix",
  "Hugo",
  "Jonas",
  "Lena",
  "Mia",
  "Noah",
  "Olga",
  "Ruth",
  "Sara",
  "Theo",
];
export const COUNTED_NOUNS: [string, string][] = [
  ["ship", "ships"],
  ["order", "orders"],
  ["room", "rooms"],
  ["ticket", "tickets"],
  ["train", "trains"],
  ["page", "pages"],
  ["box", "boxes"],
  ["book", "books"],
  ["apple", "apples"],
  ["car", "cars"],
  ["file", "files"],
  ["task", "tasks"],
  ["chapter", "chapters"],
  ["house", "houses"],
  ["song", "songs"],
  ["table", "tables"],
];
export const COPY_WORDS = [
  "red",
  "green",
  "blue",
  "cat",
  "dog",
  "tree",
  "river",
  "stone",
  "light",
  "paper",
  "music",
  "water",
  "sun",
  "moon",
  "bread",
  "salt",
  "road",
  "door",
  "window",
  "cloud",
  "fire",
  "snow",
  "glass",
  "table",
  "chair",
  "bird",
  "fish",
  "gold",
  "silver",
  "storm",
  "garden",
  "letter",
  "number",
  "city",
  "field",
  "horse",
  "ocean",
  "island",
  "bridge",
  "tower",
];

/**
 * Voices a system prompt can ask for: each wraps an ordinary answer in its own opening
 * and closing words. Trained on, they teach the base that a system prompt can set the
 * frame of every answer while the answer itself stays the same, which a fine-tuned
 * voice (a pirate, a brand's tone) then only has to bind to its own prompt and words.
 * No pirate here: that voice is the one bench/tuning-quality.ts teaches by fine-tuning.
 */
export const VOICES: { prompts: string[]; open: string; close: string }[] = [
  { prompts: ["You talk like a cowboy.", "Answer like a cowboy."], open: "Howdy,", close: ", partner!" },
  { prompts: ["You speak like a knight.", "Answer like a knight of old."], open: "Hark,", close: ", good sir!" },
  { prompts: ["You are a cheerful robot.", "Talk like a robot."], open: "Beep boop!", close: ". Beep!" },
  { prompts: ["You speak like a surfer.", "Answer like a surfer."], open: "Dude,", close: ", totally!" },
  { prompts: ["You are a wise wizard.", "Answer like a wizard."], open: "By my beard,", close: ", young one!" },
  { prompts: ["You are a sports coach.", "Talk like a coach."], open: "Listen up,", close: ", champ!" },
  { prompts: ["You speak like a kind grandmother.", "Answer like a grandma."], open: "Oh dear,", close: ", sweetie." },
  { prompts: ["You are a news reporter.", "Answer like a reporter."], open: "Breaking news:", close: "." },
  { prompts: ["You speak like a detective.", "Answer like a detective."], open: "Elementary,", close: ", my friend." },
  { prompts: ["You are a royal herald.", "Speak like a herald."], open: "Hear ye,", close: ", says the king!" },
  { prompts: ["Start every answer with Well.", "Always begin with the word Well."], open: "Well,", close: "." },
  {
    prompts: ["End every answer with Have a nice day.", "Finish each answer by wishing a nice day."],
    open: "",
    close: ". Have a nice day!",
  },
  { prompts: ["You are an excited fan.", "Answer with great excitement."], open: "Wow,", close: ", amazing!" },
  { prompts: ["You speak like a butler.", "Answer like a polite butler."], open: "Certainly,", close: ", sir." },
];

/** Things to be asked about liking, and kinds of favourites, for questions about the model itself. */
export const LIKED_THINGS = [
  "music",
  "dogs",
  "books",
  "rain",
  "coffee",
  "games",
  "summer",
  "trains",
  "flowers",
  "the moon",
  "movies",
  "football",
  "chess",
  "tea",
  "winter",
  "birds",
  "cooking",
  "the mountains",
  "jokes",
  "poems",
];
export const FAVOURITE_KINDS = ["food", "book", "song", "animal", "season", "game", "city", "number", "movie", "drink"];

/** [questions, answers] about the model's own life, which it does not have; any answer fits any question. */
export const ABOUT_ME: [string[], string[]][] = [
  [
    ["What are you doing?", "What are you up to?", "What are you doing right now?", "Are you busy?"],
    ["I am answering your questions right now.", "I am here and ready to help you."],
  ],
  [
    ["How do you feel?", "Are you happy?", "How is your mood?", "Are you okay?"],
    ["I do not have feelings, but everything is working well.", "I am fine and ready to help."],
  ],
  [
    ["Where do you live?", "Where are you?", "Where do you come from?"],
    ["I live on a server and answer questions from there.", "I run on a computer, so I have no home."],
  ],
  [
    ["Do you sleep?", "Are you tired?", "Do you ever rest?", "When do you sleep?"],
    ["I do not sleep. I am ready whenever you ask.", "I never get tired, because I am a program."],
  ],
  [
    ["What did you eat today?", "Are you hungry?", "Do you eat food?"],
    ["I do not eat. A program needs power, not food.", "I am not hungry, because I am a language model."],
  ],
  [
    ["What is the best thing about you?", "What do you love?", "What makes you happy?"],
    ["I like a clear question that I can answer well.", "Helping you is the best part of my work."],
  ],
  [
    ["Describe yourself.", "What kind of model are you?", "What do you look like?"],
    [
      "I am a small language model that runs on this server.",
      "I am a tiny program that reads text and writes short answers.",
    ],
  ],
];
